"""The transforms that change what every op does while they are open: forward mode's dual levels
(forward_ad.py) and vmap's levels (chibigrad/batching.py).

``Function.apply`` reads one number, ``state.open``, so that ordinary code pays nothing for them.
When it is not zero, batched arguments go first to their vmap level's batching rule (which calls
the op again on plain tensors), then tangents to forward mode, as in PyTorch's functorch, where
each transform is an interpreter on a stack and an op meets the innermost one first.
"""


class _State:
    open = 0  # dual levels + vmap levels open now
    batching = None  # chibigrad/batching.py once imported (it imports the ops, which import this)


state = _State()


def apply(cls, args, kwargs):
    """``cls.apply`` while a transform is open."""
    from . import forward_ad, function
    batching = state.batching
    if batching is not None:
        level = batching.level_of(args)
        if level is not None:
            return batching.apply(cls, args, kwargs, level)
    if forward_ad._state.level is not None:
        return forward_ad.apply_with_tangents(cls, args, kwargs)
    return function._apply(cls, args, kwargs)
