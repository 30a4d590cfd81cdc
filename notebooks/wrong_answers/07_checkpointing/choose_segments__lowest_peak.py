# Returns the s with the lowest peak instead of the fewest segments that fit: it pays for more
# recomputation than the budget requires.
def choose_segments(model, x, budget):
    """The fewest segments whose training step keeps at most `budget` saved bytes at its peak (or None)."""
    peaks = {}
    for s in range(1, len(model) + 1):
        memory.reset_peak()
        before = memory.saved()
        out = checkpoint_sequential(model, s, x, use_reentrant=False)
        out.pow(2).mean().backward()
        peaks[s] = memory.max_saved() - before
    best = min(peaks, key=peaks.get)
    return best if peaks[best] <= budget else None
