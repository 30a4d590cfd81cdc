"""autograd.Function: the one mechanism every differentiable op goes through.

A Function subclass defines ``forward(ctx, *args)`` and ``backward(ctx,
*grad_outputs)``. ``apply`` runs forward without recording, then, if any
input needs a gradient, turns ``ctx`` into the graph node: ctx *is* the
``grad_fn`` of the outputs, an instance of a class named
``<ClassName>Backward`` (chibigrad's own ops name theirs as PyTorch does,
e.g. ``MulBackward0``). Built-in ops and the custom Functions students write
differ only in that built-ins compute forward on numpy arrays.
"""
import functools

from . import anomaly_mode, grad_mode
from .node import Node, SavedTensor


class FunctionCtx:
    """What ``forward`` may tell ``backward``: saved tensors and flags."""

    def save_for_backward(self, *tensors):
        """Keep tensors for backward; they are freed after it and version-checked."""
        self.to_save = tensors

    def mark_dirty(self, *tensors):
        """Declare inputs that forward modified in place."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors):
        """Declare outputs that never get a gradient (indices, masks)."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value):
        """With False, backward receives None instead of zeros for unused outputs."""
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The node a Function leaves in the graph; it is also the forward's ctx."""

    _forward_cls = None
    materialize_grads = True
    to_save = ()
    dirty_tensors = ()
    non_differentiable = ()
    _save_layout = ()

    def apply(self, *grad_outputs):
        return self._forward_cls.backward(self, *grad_outputs)

    @property
    def saved_tensors(self):
        return tuple(None if s is None else s.unpack(self) for s in self._saved_slots)

    @property
    def _saved_slots(self):
        # None entries in save_for_backward stay None; the rest are SavedTensors
        it = iter(self._saved)
        return [None if t is None else next(it) for t in self._save_layout]


class FunctionMeta(type):
    """Gives each Function its backward node class, named as PyTorch names it."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        node_name = attrs.get("node_name", f"{name}Backward")
        cls._backward_cls = type(node_name, (BackwardCFunction,), {"_forward_cls": cls,
                                                                    "__module__": cls.__module__})


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class for differentiable operations: subclass it, call ``apply``."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        from ..tensor import Tensor

        ctx = cls._backward_cls()
        needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx.needs_input_grad = needs
        record = grad_mode.is_grad_enabled() and True in needs
        if grad_mode.is_grad_enabled():
            grad_mode._set_enabled(False)
            try:
                outputs = cls.forward(ctx, *args, **kwargs)
            finally:
                grad_mode._set_enabled(True)
        else:
            outputs = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        if record:
            _connect(ctx, args, outs)
        elif ctx.dirty_tensors:
            for t in ctx.dirty_tensors:
                t._bump_version()
        return outputs


def _connect(ctx, args, outs):
    """Make ctx the grad_fn of ``outs`` and an edge to each input's node."""
    from ..tensor import Tensor

    # An edge per tensor argument; backward still returns one value per argument.
    ctx._tensor_args = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
    ctx.next_functions = tuple(args[i]._gradient_edge() for i in ctx._tensor_args)
    ctx._input_meta = tuple((a.shape, a.dtype) if isinstance(a, Tensor) and a.requires_grad else None
                            for a in args)
    dirty = ctx.dirty_tensors
    non_diff = ctx.non_differentiable
    ctx._output_meta = []
    for nr, out in enumerate(outs):
        if not isinstance(out, Tensor):
            ctx._output_meta.append(None)
            continue
        ctx._output_meta.append((out.shape, out.dtype))
        if any(out is t for t in dirty):
            out._check_inplace()
            out._bump_version()
        if not out.dtype.is_floating_point or any(out is t for t in non_diff):
            out._requires_grad = False
            continue
        out.grad_fn, out._output_nr = ctx, nr
    if anomaly_mode.is_anomaly_enabled():
        anomaly_mode.record_forward_stack(ctx)
    ctx._save_layout = ctx.to_save
    ctx._saved = [SavedTensor(t, any(t is o for o in outs)) for t in ctx.to_save if t is not None]
    ctx.__dict__.pop("to_save", None)


def once_differentiable(backward):
    """Decorate a backward that is not itself differentiable (it runs under no_grad)."""

    @functools.wraps(backward)
    def wrapper(ctx, *grad_outputs):
        with grad_mode.no_grad():
            return backward(ctx, *grad_outputs)

    return wrapper
