# mistake: run_segment is defined in the loop and reads the loop's `segment` variable, so when backward
#   recomputes, every checkpointed segment runs the last segment's layers
# expect: 0 points for checkpoint_segments
def checkpoint_segments(layers, boundaries, x):
    """Run layers in order; every segment but the last is checkpointed."""
    cuts = [0] + list(boundaries) + [len(layers)]
    h = x
    for k in range(len(cuts) - 1):
        segment = layers[cuts[k]:cuts[k + 1]]

        def run_segment(inp):
            for layer in segment:
                inp = layer(inp)
            return inp

        h = run_segment(h) if k == len(cuts) - 2 else checkpoint(run_segment, h, use_reentrant=False)
    return h
