# mistake: never resets the peak between tries, so every s after the first sees the largest peak so far
# expect: 0 points for choose_segments
def choose_segments(model, x, budget):
    """The fewest segments whose training step keeps at most `budget` saved bytes at its peak (or None)."""
    for s in range(1, len(model) + 1):
        before = memory.saved()
        checkpoint_sequential(model, s, x, use_reentrant=False).pow(2).mean().backward()
        if memory.max_saved() - before <= budget:
            return s
    return None
