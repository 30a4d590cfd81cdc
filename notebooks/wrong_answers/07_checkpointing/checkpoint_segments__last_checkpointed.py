# Checkpoints the last segment too: its backward runs right after forward, so recomputing it only
# costs time (and with no boundaries at all, the whole model is recomputed).
def checkpoint_segments(layers, boundaries, x):
    """Run layers in order; every segment but the last is checkpointed."""
    def segment(part):
        def run_segment(inp):
            for layer in part:
                inp = layer(inp)
            return inp
        return run_segment

    edges = [0] + list(boundaries) + [len(layers)]
    for start, end in zip(edges, edges[1:]):
        x = checkpoint(segment(layers[start:end]), x, use_reentrant=False)
    return x
