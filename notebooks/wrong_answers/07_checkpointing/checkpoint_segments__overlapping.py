# Off by one at the boundaries: each checkpointed segment also runs the first layer of the next one,
# so that layer is applied twice.
def checkpoint_segments(layers, boundaries, x):
    """Run layers in order; every segment but the last is checkpointed."""
    def segment(part):
        def run_segment(inp):
            for layer in part:
                inp = layer(inp)
            return inp
        return run_segment

    start = 0
    for end in boundaries:
        x = checkpoint(segment(layers[start:end + 1]), x, use_reentrant=False)
        start = end
    return segment(layers[start:])(x)
