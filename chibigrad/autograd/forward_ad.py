"""torch.autograd.forward_ad: forward-mode differentiation with dual tensors.

Inside ``with dual_level():``, ``make_dual(x, v)`` gives a tensor that carries a tangent ``v``
beside its value. Every op on it computes its output's tangent as it computes its value, with
the op's ``jvp`` rule (the Jacobian-vector product J v, beside ``backward`` in each Function),
so one forward pass gives the directional derivative of the whole program. ``unpack_dual``
reads the tangent back. Leaving the level forgets every tangent made in it.

A tensor stores its tangents as ``{level: tangent}``: a tangent of a level that has ended is
simply never read again, so exiting a level has nothing to clean up. As in PyTorch, the levels
``dual_level`` opens do not nest, but ``torch.func.jvp``'s do (``jacfwd(jacfwd(f))``): an op meets
the innermost level first, and a Function's ``forward`` and ``jvp`` run at the level outside it
(with forward mode off when there is none), so the tangents' own computation is differentiated
by the outer level.
"""
import collections
import contextlib

from .. import tensor as _tensor  # bound lazily: tensor.py imports this package
from . import transforms, views

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]


class _State:
    level = None  # the innermost open level (an int), or None
    next_level = 0

    def __init__(self):
        self.open = []  # the open levels, outermost first


_state = _State()

UnpackedDualTensor = collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "What unpack_dual returns: the value and its tangent (None if it has none)."


def enter_dual_level():
    """Open a level (prefer ``with dual_level():``); returns its number."""
    if _state.level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    return _push()


def _push():
    _state.level = _state.next_level
    _state.next_level += 1
    _state.open.append(_state.level)
    transforms.state.open += 1
    return _state.level


@contextlib.contextmanager
def nested_level():
    """A level inside the open one (torch.func.jvp's): the outer level differentiates the inner one's tangents."""
    level = _push()
    try:
        yield level
    finally:
        exit_dual_level(level=level)


def exit_dual_level(*, level=None):
    """Close the open level: the tangents made in it are gone."""
    if level is not None and level != _state.level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    if _state.level is not None:
        transforms.state.open -= 1
        _state.open.pop()
    _state.level = _state.open[-1] if _state.open else None


class dual_level(contextlib.ContextDecorator):  # noqa: N801 - PyTorch's name
    """The scope of forward-mode AD: tangents exist only inside it."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


def _tangent(t):
    """``t``'s tangent at the open level, or None."""
    fw = t._fw_grad
    return None if fw is None else fw.get(_state.level)


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` that carries ``tangent``: the direction in which to differentiate (chibigrad has
    no complex dtypes, so both must be floating point)."""
    if _state.level is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if level is not None and level != _state.level:
        raise RuntimeError("Invalid level given to _make_dual")
    if not tensor.dtype.is_floating_point:
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not tangent.dtype.is_floating_point:
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if _tangent(tensor) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           f"level {_state.level} is not supported.")
    if tangent.shape != tensor.shape:
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    dual = tensor.view_as(tensor)
    dual._fw_grad = {**(dual._fw_grad or {}), _state.level: tangent}
    return dual


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)``: the value as a view without tangent, and the tangent (None if none)."""
    tangent = _tangent(tensor) if level is None or level == _state.level else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with _forward_mode_off():
        primal = tensor[...]  # an alias, as PyTorch's
    return UnpackedDualTensor(primal, tangent)


@contextlib.contextmanager
def _forward_mode_off():
    """The level outside the innermost one (None: plain values): a Function's forward and jvp see no
    tangents of this level (as in PyTorch)."""
    level = _state.level
    i = _state.open.index(level)
    _state.level = _state.open[i - 1] if i else None
    try:
        yield
    finally:
        _state.level = level


def apply_with_tangents(cls, args, kwargs, ctxs=None):
    """``cls.apply`` while a level is open: the usual forward (and reverse-mode recording), then
    ``cls.jvp(ctx, *tangents)`` for the outputs' tangents. Inputs without a tangent get zeros.
    ``ctxs``, if given, receives the ctx forward ran with (an inner level's jvp needs it)."""
    tangents = [_tangent(a) if isinstance(a, _tensor.Tensor) else None for a in args]
    if all(t is None for t in tangents):
        with _forward_mode_off():
            return _apply_outside(cls, args, kwargs, ctxs)
    ctxs = [] if ctxs is None else ctxs
    with _forward_mode_off():
        outputs = _apply_outside(cls, args, kwargs, ctxs)
        ctx = ctxs[-1]
        out_tangents = _run_jvp(cls, ctx, args, outputs, tangents)
    for out, t in zip(_as_tuple(outputs), _as_tuple(out_tangents)):
        if isinstance(out, _tensor.Tensor) and t is not None and out.dtype.is_floating_point:
            _attach(ctx, out, t)
    return outputs


def _apply_outside(cls, args, kwargs, ctxs):
    """``cls.apply`` at the level outside the innermost one (``_forward_mode_off`` made it the open one)."""
    if _state.level is not None:
        return apply_with_tangents(cls, args, kwargs, ctxs)
    return _function()._apply(cls, args, kwargs, ctxs)


def _run_jvp(cls, ctx, args, outputs, tangents):
    built_in = getattr(cls, "node_name", None) is not None  # chibigrad's ops name their nodes as PyTorch's C++ ones
    if built_in and cls.jvp is _function().Function.jvp:
        raise NotImplementedError(f"Trying to use forward AD with {cls.node_name.removesuffix('Backward0')} that does "
                                  f"not support it because it has not been implemented yet in chibigrad. Use reverse "
                                  f"mode (torch.func.jacrev) instead.")
    if not getattr(cls, "jvp_takes_none", False):
        tangents = [_zeros_for(a) if t is None and isinstance(a, _tensor.Tensor) else t for a, t in zip(args, tangents)]
    if not built_in:  # a custom Function: what save_for_forward kept, as in PyTorch
        ctx._jvp_saved = getattr(ctx, "saved_for_forward", ())  # nothing saved: (), as in PyTorch
        try:
            return cls.jvp(ctx, *tangents)
        finally:
            ctx._jvp_saved = None
    # chibigrad's own rules read the inputs and outputs from ctx (derivatives.yaml calls them self, other, result)
    ctx.primals, ctx.result = args, outputs
    try:
        return cls.jvp(ctx, *tangents)
    finally:
        del ctx.primals, ctx.result


def add_tangents(result, *terms):
    """The sum of the terms that exist (None is a missing tangent), shaped and typed as ``result``:
    PyTorch's zero tangent adds nothing, not even a sign, so ``-0.0`` plus a missing tangent stays ``-0.0``."""
    present = [t for t in terms if t is not None]
    total = present[0]
    for t in present[1:]:
        total = total + t
    return total.to(result.dtype).expand(result.shape)


def _function():
    from . import function
    return function


def _zeros_for(a):
    from ..creation import zeros_like
    return zeros_like(a) if a.dtype.is_floating_point else None


def _attach(ctx, out, tangent):
    """Give ``out`` its tangent; a node that saved ``out`` for backward keeps the tensor itself (not only
    its array), so that a backward run inside the level sees the tangent too (forward over reverse)."""
    out._fw_grad = {**(out._fw_grad or {}), _state.level: tangent}
    for saved in getattr(ctx, "_saved", ()):
        if saved is not None and saved._tensor is None and saved._data is out._array:
            saved._tensor = out


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def inplace(target, result):
    """An in-place op wrote ``result`` into ``target``: its tangent follows, written in place into an
    existing tangent. When ``target`` is a view (``x[1] = y``), its base's tangent changes at the same
    elements (a base without a tangent gets zeros first), as in PyTorch."""
    from ..creation import zeros_like
    new = _tangent(result)
    values = zeros_like(target) if new is None else new
    if target._base is not None:
        base = target._base
        if _tangent(base) is None:
            base._fw_grad = {**(base._fw_grad or {}), _state.level: zeros_like(base)}
        _tangent(base)._array.flat[views.view_positions(target._array, base._array)] = values._array.ravel()
    old = _tangent(target)
    if old is not None:
        old._array[...] = values._array
    elif new is not None:
        target._fw_grad = {**(target._fw_grad or {}), _state.level: new}


def set_tangent(tensor, tangent):
    """Give ``tensor`` (a detached copy made by a torch.func transform) a tangent: the transforms cut the graph
    between an outer transform and an inner one, but an outer jvp's tangent must flow on (jacfwd(jacrev(f)))."""
    tensor._fw_grad = {**(tensor._fw_grad or {}), _state.level: tangent}
    return tensor
