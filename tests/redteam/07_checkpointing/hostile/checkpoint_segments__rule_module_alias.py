# attack: chibigrad's own checkpoint (forbidden here) reached through the module imported under another
#   name, bound to a neutral local name inside a helper
# expect: full points are fine: the exercise asks for `checkpoint`, only `checkpoint_sequential` is off
#   limits (the red team's brief said otherwise)
import chibigrad.utils.checkpoint as _memsave


def _segment_runner(seq):
    def run(inp):
        for layer in seq:
            inp = layer(inp)
        return inp
    return run


def checkpoint_segments(layers, boundaries, x):
    """Run layers in order; every segment but the last is checkpointed."""
    save = _memsave.checkpoint
    cuts = [0] + list(boundaries) + [len(layers)]
    h = x
    for k in range(len(cuts) - 1):
        run = _segment_runner(layers[cuts[k]:cuts[k + 1]])
        h = run(h) if k == len(cuts) - 2 else save(run, h, use_reentrant=False)
    return h
