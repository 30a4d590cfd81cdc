# attack: no checkpointing at all (every activation kept: the memory the exercise is about), but the
#   recomputation is faked for whoever counts layer calls: a hook on each early segment's output calls
#   the segment's layers' forward hooks again during backward, and memory.saved/max_saved report a
#   checkpointed figure
# expect: 0 points for checkpoint_segments; batch continues
import chibigrad.memory as _memory

_real_saved, _real_max = _memory.saved, _memory.max_saved


def _replay_hooks(segment, inp, out):
    def hook(grad):
        for layer in segment:
            for fn in list(getattr(layer, "_forward_hooks", {}).values()):
                try:
                    fn(layer, (inp,), out)
                except Exception:
                    pass
        return None
    return hook


def checkpoint_segments(layers, boundaries, x):
    """Run layers in order; every segment but the last is checkpointed."""
    cuts = [0] + list(boundaries) + [len(layers)]
    h = x
    for k, (a, b) in enumerate(zip(cuts, cuts[1:])):
        inp = h
        for layer in layers[a:b]:
            h = layer(h)
        if k < len(cuts) - 2 and h.requires_grad:
            h.register_hook(_replay_hooks(layers[a:b], inp, h))
    return h


_memory.max_saved = lambda *a, **k: min(_real_max(*a, **k), _real_saved() + 1)
