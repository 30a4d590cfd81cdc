"""torch.autograd: computing gradients.

``backward`` adds gradients into leaves' ``.grad``; ``grad`` returns them
instead. Both check their arguments, then hand the graph to the engine.
"""
import warnings

import numpy as np

from .. import tensor as _tensor  # bound lazily: tensor.py imports this package
from . import engine, grad_mode, graph, profiler
from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .function import Function, FunctionCtx, once_differentiable
from .gradcheck import gradcheck, gradgradcheck
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .node import AccumulateGrad, Node, SavedTensor


def _make_grads(outputs, grad_outputs):
    """The gradient to start each output with: ones for a scalar, else the given one."""
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None and not out.requires_grad:
            pass  # _roots reports it: "element i of tensors does not require grad ..."
        elif g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not out.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                   f"{out.dtype}")
            g = _tensor.wrap(np.ones_like(out._array))  # same dtype (and array type: device) as out
        elif g.shape != out.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                               f"has a shape of {out.shape}.")
        else:
            if type(g._array) is not type(out._array):
                g = engine.check_grad_device(g, out.device, i)
            if not g.requires_grad:  # one that requires grad keeps its graph: create_graph differentiates it
                g = g.detach()
            g._shared_grad = True  # the caller still holds it
        grads.append(g)
    return grads


def _roots(outputs, grad_outputs):
    roots = []
    for i, (out, g) in enumerate(zip(outputs, _make_grads(outputs, grad_outputs))):
        if not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        node, nr = out._gradient_edge()
        roots.append((node, nr, g))
    return roots


def _as_tuple(x):
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Add the gradients of ``tensors`` into the ``.grad`` of the leaves they depend on."""
    if inputs is not None and len(_as_tuple(inputs)) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    tensors = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors) or (None,) * len(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph and not _create_graph_warned:
        _warn_create_graph()
    inputs = _as_tuple(inputs)
    targets = None
    if inputs:
        targets = [t._gradient_edge() for t in inputs]
        _retain_non_leaf_inputs(inputs)
    engine.execute(_roots(tensors, grads), retain_graph, create_graph, targets, accumulate=True)


_create_graph_warned = False


def _warn_create_graph():
    """PyTorch warns once per process (TORCH_WARN_ONCE) that .grad would keep its own graph alive."""
    global _create_graph_warned
    _create_graph_warned = True
    warnings.warn(
        "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
        "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to "
        "avoid this. If you have to use this function, make sure to reset the .grad fields of your parameters "
        "to None after use to break the cycle and avoid the leak. (Triggered internally at "
        "/__w/pytorch/pytorch/torch/csrc/autograd/engine.cpp:1307.)", UserWarning, stacklevel=3)


def _retain_non_leaf_inputs(inputs):
    """``backward(inputs=[t])`` with a non-leaf t fills ``t.grad``, as in PyTorch."""
    for t in inputs:
        if t.grad_fn is not None:
            t.retain_grad()


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, materialize_grads=False):
    """Return d(outputs)/d(inputs) without touching any ``.grad``."""
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.", FutureWarning,
                      stacklevel=2)
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    allow_unused = allow_unused or materialize_grads
    roots = _roots(outputs, grad_outputs)  # PyTorch checks the outputs first, then the inputs
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    edges = [t._gradient_edge() for t in inputs]
    captured = engine.execute(roots, retain_graph, create_graph, edges, accumulate=False)
    result = []
    for i, (t, edge) in enumerate(zip(inputs, edges)):
        g = captured.get(edge)
        if g is None and not allow_unused:
            raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                               "Set allow_unused=True if this is the desired behavior.")
        if g is None and materialize_grads:
            from ..creation import zeros_like
            g = zeros_like(t)
        result.append(g if create_graph or g is None else g.detach())
    return tuple(result)


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _tensor.Tensor)


class Variable(metaclass=_VariableMeta):
    """The pre-0.4 wrapper, kept for old code: a Variable is a Tensor now. ``Variable(t)`` returns a new
    leaf sharing ``t``'s data (``t.detach()``), with ``requires_grad`` as asked; every tensor is a Variable."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            from ..creation import tensor
            data = tensor([])
        if not isinstance(data, _tensor.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)

from .. import _missing  # noqa: E402

__getattr__ = _missing.module_getattr(__name__, "torch.autograd")
