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
import inspect

from .. import tensor as _tensor  # bound lazily: tensor.py imports this package
from . import anomaly_mode, grad_mode, transforms, views
from .node import Node, PackedSavedTensor, SavedTensor, _saved_tensors_hooks


class FunctionCtx:
    """What ``forward`` may tell ``backward``: saved tensors and flags."""

    def save_for_backward(self, *tensors):
        """Keep tensors for backward; they are freed after it and version-checked."""
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Keep tensors for ``jvp`` (forward mode), where ``ctx.saved_tensors`` returns them."""
        self.saved_for_forward = tensors

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

    def apply(self, *grad_outputs):
        return self._forward_cls.backward(self, *grad_outputs)

    _jvp_saved = None  # what save_for_forward kept, while jvp runs

    @property
    def saved_tensors(self):
        if self._jvp_saved is not None:
            return self._jvp_saved
        tensors = []
        for saved in self._saved:
            tensors.append(None if saved is None else saved.unpack(self))
        return tuple(tensors)

    @property
    def _raw_saved_tensors(self):
        return self._saved

    def __getattr__(self, name):
        """PyTorch's view of what a node saved: ``grad_fn._saved_self`` (unpacked and checked as backward
        would), ``_raw_saved_self`` (the SavedTensor) and saved values such as ``_saved_exponent``. An op
        names its saved tensors in ``saved_names`` (in save_for_backward's order) and the ctx attributes
        it saves in ``saved_values``, with PyTorch's names. (Only called for names not found otherwise.)"""
        op = type(self)._forward_cls
        raw = name.startswith("_raw_saved_")
        key = name[len("_raw_saved_"):] if raw else name[len("_saved_"):] if name.startswith("_saved_") else None
        if key is not None and op is not None and key in op.saved_names:
            i = op.saved_names.index(key)
            saved = self._saved[i] if i < len(self._saved) else None
            return saved if raw or saved is None else saved.unpack(self)
        if key is not None and not raw and op is not None and key in op.saved_values:
            return self.__dict__[key]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


class FunctionMeta(type):
    """Gives each Function its backward node class, named as PyTorch names it."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        # PyTorch's newer style: a class that defines setup_context has a forward without ctx
        cls._separate_setup_context = "setup_context" in attrs or getattr(cls, "_separate_setup_context", False)
        node_name = attrs.get("node_name", f"{name}Backward")
        # PyTorch's built-in nodes are C++ classes (<MulBackward0 object at ...>); a Function
        # written in Python gets a class made in torch/autograd/function.py, and its repr says so.
        prefix = "" if "node_name" in attrs else "torch.autograd.function."
        cls._backward_cls = type(node_name, (BackwardCFunction,), {
            "_forward_cls": cls, "__module__": cls.__module__, "_repr_prefix": prefix})


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class for differentiable operations: subclass it, call ``apply``."""

    saved_names = ()  # PyTorch's names for the tensors forward saves, e.g. ("self", "other"): grad_fn._saved_self
    saved_values = ()  # ctx attributes PyTorch's node also shows, e.g. ("exponent",): grad_fn._saved_exponent

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """The style PyTorch's documentation now recommends: ``forward(*args)`` computes without a ctx, then
        ``setup_context(ctx, inputs, output)`` saves what backward needs. Override both, or neither."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Forward mode (autograd/forward_ad.py): the outputs' tangents from the inputs' tangents, J v."""
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward; if an input needs a gradient, record ctx as the outputs' grad_fn."""
        if transforms.state.open:  # a vmap or a dual level is open (autograd/transforms.py)
            return transforms.apply(cls, args, kwargs)
        return _apply(cls, args, kwargs)


def _apply(cls, args, kwargs, ctxs=None):
    """What ``apply`` does; ``ctxs``, if given, receives the ctx forward ran with (forward mode's jvp needs it)."""
    if not grad_mode._state.enabled:  # grad mode off (e.g. inside backward): nothing is recorded
        return _run_unrecorded(cls, args, kwargs, ctxs)
    edges = _collect_next_edges(args)
    needs = tuple([node is not None for node, _ in edges])  # does the argument need a gradient?
    if True not in needs:  # nothing to record
        return _run_unrecorded(cls, args, kwargs, ctxs)
    ctx = cls._backward_cls()
    if ctxs is not None:
        ctxs.append(ctx)
    ctx.needs_input_grad = needs
    outputs = _forward(cls, ctx, args, kwargs)  # with grad mode off: forward itself is never recorded
    if isinstance(outputs, tuple):
        return _connect(ctx, args, edges, outputs)
    return _connect(ctx, args, edges, (outputs,))[0]


Function._separate_setup_context = False  # the base only declares setup_context


def _collect_next_edges(args):
    """For each argument, the edge ``(node, input_nr)`` its gradient goes to (PyTorch's
    collect_next_edges); the node is None for an argument that needs no gradient."""
    edges = []
    for a in args:
        edges.append(a._gradient_edge() if isinstance(a, _tensor.Tensor) else (None, 0))
    return edges


def _forward(cls, ctx, args, kwargs):
    """``forward(ctx, *args)``, or in PyTorch's newer style ``forward(*args)`` followed by
    ``setup_context(ctx, inputs, output)``. Always with grad mode off, as in PyTorch: forward
    itself is never recorded."""
    state = grad_mode._state
    enabled, state.enabled = state.enabled, False
    try:
        if not cls._separate_setup_context:
            return cls.forward(ctx, *args, **kwargs)
        bound = inspect.signature(cls.forward).bind(*args, **kwargs)  # setup_context sees every input
        bound.apply_defaults()  # positionally, defaults included, as in PyTorch
        outputs = cls.forward(*bound.args)
        cls.setup_context(ctx, bound.args, outputs)
        return outputs
    finally:
        state.enabled = enabled


def _run_unrecorded(cls, args, kwargs, ctxs=None):
    """Forward only: the ctx is thrown away, in-place outputs still get a new version."""
    ctx = cls._backward_cls.__new__(cls._backward_cls)  # (not a Node: it takes no sequence number)
    if ctxs is not None:
        ctxs.append(ctx)
    ctx.needs_input_grad = (False,) * len(args)
    outputs = _forward(cls, ctx, args, kwargs)
    for t in ctx.dirty_tensors:
        t._bump_version()
    return outputs


def _connect(ctx, args, edges, outs):
    """Make ctx the grad_fn of ``outs``, with the ``edges`` of its tensor inputs; return
    the outputs (see _new_outputs)."""
    outs = _new_outputs(ctx, args, outs)
    next_nodes, next_nrs, tensor_args, input_meta = [], [], [], []
    for i, (a, needed) in enumerate(zip(args, ctx.needs_input_grad)):
        if isinstance(a, _tensor.Tensor):
            node, nr = edges[i]
            next_nodes.append(node)
            next_nrs.append(nr)
            tensor_args.append(i)  # backward returns a value per argument; the engine keeps these
        input_meta.append(a._metadata() if needed else None)
    ctx._next_nodes, ctx._next_nrs = tuple(next_nodes), tuple(next_nrs)  # (the edges, flat: see Node)
    ctx._tensor_args, ctx._input_meta = tuple(tensor_args), tuple(input_meta)
    output_meta = []
    for nr, out in enumerate(outs):
        output_meta.append(_mark_output(ctx, nr, out))
    ctx._output_meta = tuple(output_meta)
    for t in ctx.dirty_tensors:
        if t._base is not None and t._grad_fn is ctx:
            views.rebase_dirty_view(ctx, args, t)
    if anomaly_mode._state.enabled:
        anomaly_mode.record_forward_stack(ctx)
    if ctx.to_save:
        _save(ctx, outs)
    return outs


def _new_outputs(ctx, args, outs):
    """An input returned as is (and not marked dirty) becomes a new tensor over the same
    data, as in PyTorch; otherwise recording would turn the input itself into an output."""
    for out in outs:
        if _among(out, args):
            return tuple([o._shallow_copy() if _among(o, args) and not _among(o, ctx.dirty_tensors) else o
                          for o in outs])
    return outs  # (as forward returned them: a named tuple stays one)


def _among(x, items):
    """``x in items`` by identity (``in`` would compare tensors element-wise)."""
    for item in items:
        if item is x:
            return True
    return False


def _save(ctx, outs):
    """Keep what forward passed to save_for_backward as SavedTensors. Not the tensors: keeping
    those would hold their data after backward frees it, and a saved output would form a
    cycle output -> grad_fn -> output."""
    to_save = ctx.to_save
    del ctx.to_save  # the node keeps the SavedTensors only (even if making one raises)
    kind = PackedSavedTensor if _saved_tensors_hooks else SavedTensor  # (inside saved_tensors_hooks)
    saved = []
    for t in to_save:
        saved.append(None if t is None else kind(t, _among(t, outs)))
    ctx._saved = tuple(saved)


def _mark_output(ctx, nr, out):
    """Attach output ``nr`` to ctx (unless it cannot have a gradient); return its (shape, dtype, array type)."""
    if not isinstance(out, _tensor.Tensor):
        return None
    if ctx.dirty_tensors and _among(out, ctx.dirty_tensors):
        views.check_inplace(out)
        out._bump_version()
    if out._array.dtype.kind != "f" or ctx.non_differentiable and _among(out, ctx.non_differentiable):
        out._requires_grad = False
    else:
        out._grad_fn, out._output_nr = ctx, nr
    return out._metadata()


def once_differentiable(backward):
    """Decorate a backward that is not itself differentiable (it runs under no_grad).

    As in PyTorch, when a grad_output requires grad (double backward is being recorded
    through it), the gradients go through an ``Error`` node, so that differentiating them
    raises instead of silently leaving this term out."""

    @functools.wraps(backward)
    def wrapper(ctx, *grad_outputs):
        with grad_mode.no_grad():
            outputs = backward(ctx, *grad_outputs)
        if not grad_mode.is_grad_enabled() or not any(
                isinstance(g, _tensor.Tensor) and g.requires_grad for g in grad_outputs):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = list((outputs,) if single else outputs)
        where = [i for i, o in enumerate(outs) if isinstance(o, _tensor.Tensor)]
        errors = DelayedError.apply(*[outs[i].detach().requires_grad_() for i in where])
        for i, e in zip(where, errors if isinstance(errors, tuple) else (errors,)):
            outs[i] = e
        return outs[0] if single else tuple(outs)

    return wrapper


class DelayedError(Function):
    """The node ``once_differentiable`` puts after a backward: differentiating through it raises."""
    node_name = "Error"

    @staticmethod
    def forward(ctx, *tensors):
        outputs = tuple(t.detach() for t in tensors)
        return outputs if len(outputs) > 1 else outputs[0]

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")
