# Never resets the peak: max_saved() still remembers the largest step measured before (or anything
# earlier in the session), so later, smaller steps look as large.
def choose_segments(model, x, budget):
    """The fewest segments whose training step keeps at most `budget` saved bytes at its peak (or None)."""
    for s in range(1, len(model) + 1):
        before = memory.saved()
        out = checkpoint_sequential(model, s, x, use_reentrant=False)
        out.pow(2).mean().backward()
        if memory.max_saved() - before <= budget:
            return s
    return None
