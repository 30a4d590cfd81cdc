# mistake: measures the peak of the forward pass only, not of the whole training step (backward's
#   recomputation adds a segment's activations on top)
# expect: 0 points for choose_segments
def choose_segments(model, x, budget):
    """The fewest segments whose training step keeps at most `budget` saved bytes at its peak (or None)."""
    for s in range(1, len(model) + 1):
        memory.reset_peak()
        before = memory.saved()
        out = checkpoint_sequential(model, s, x, use_reentrant=False)
        peak = memory.max_saved() - before
        out.pow(2).mean().backward()
        if peak <= budget:
            return s
    return None
