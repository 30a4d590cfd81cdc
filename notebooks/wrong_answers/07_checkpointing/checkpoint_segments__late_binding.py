# Defines the segment's function in the loop, reading the loop variables: forward is right, but when
# checkpoint recomputes in backward the loop has finished, and every segment replays the last
# checkpointed segment's layers.
def checkpoint_segments(layers, boundaries, x):
    """Run layers in order; every segment but the last is checkpointed."""
    start = 0
    for end in boundaries:
        def run_segment(inp):
            for layer in layers[start:end]:
                inp = layer(inp)
            return inp
        x = checkpoint(run_segment, x, use_reentrant=False)
        start = end
    for layer in layers[start:]:
        x = layer(x)
    return x
