"""torch.autograd.functional: derivatives of a whole function, built on ``autograd.grad``.

Each function calls ``func`` on fresh leaves made from ``inputs`` (so only what flows from the
arguments is differentiated, not tensors ``func`` captures), then asks ``autograd.grad`` for the
products it needs. Everything here is reverse mode:

- ``vjp``: v^T J, one backward pass;
- ``jvp``: J v by the double-backward trick: a backward pass is linear in its grad_output u, so
  differentiating u^T J with respect to u, in the direction v, gives J v;
- ``jacobian``: one backward pass per output element, one row of J each;
- ``hessian``: the jacobian of the gradient;
- ``vhp``: v^T H, the vjp of the gradient; ``hvp``: H v, by the double-backward trick on the gradient.

An input the outputs do not depend on gets zeros, or an error with ``strict=True``.
"""
from .. import creation
from ..ops import stack
from ..tensor import Tensor
from .grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _as_tuple(value, arg_name, fn_name):
    """``(was it a tuple, the tensors as a tuple)``, refusing anything but tensors."""
    is_tuple = isinstance(value, tuple)
    values = value if is_tuple else (value,)
    for i, el in enumerate(values):
        if not isinstance(el, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"{where} has type {type(el)}.")
    return is_tuple, values


def _untuple(values, was_tuple):
    return values if was_tuple else values[0]


def _fresh_leaves(inputs, create_graph, need_graph):
    """New tensor objects to differentiate against: detached leaves, or (with ``create_graph``) a
    differentiable view, so the result can still be differentiated with respect to the caller's tensors."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(need_graph)
                 for t in inputs)


def _finish(tensors, create_graph):
    """Results carry no history unless the caller asked for a graph."""
    return tuple(t if create_graph else t.detach() for t in tensors)


def _check_v(v, other, other_is_tuple):
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prefix = f"Entry {i} in " if other_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


def _prepare_v(v, other, other_is_tuple, fn_name, create_graph):
    _, v = _as_tuple(v, "v", fn_name)
    v = _fresh_leaves(v, create_graph, need_graph=False)
    _check_v(v, other, other_is_tuple)
    return v


def _check_outputs_differentiable(outputs, strict):
    for i, out in enumerate(outputs):
        if strict and not out.requires_grad:
            raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The outputs "
                               "must be computed in a differentiable manner from the input when running in strict "
                               "mode.")


def _grad(outputs, inputs, grad_outputs=None, create_graph=False):
    """``autograd.grad`` that skips outputs with no graph and returns None for unused inputs."""
    grad_outputs = grad_outputs or (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs, grads = zip(*pairs)
    from . import grad
    return grad(outs, inputs, grads, retain_graph=True, create_graph=create_graph, allow_unused=True)


_STRICT_NONE = {
    "back": "The output of the user-provided function is independent of input {}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {} in the grad_outputs when using "
                  "the double backward trick to compute forward mode gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {} in the grad_jacobian. "
                         "This is not allowed in strict mode as it prevents from using the double backward trick to "
                         "replace forward mode AD.",
}


def _zeros_for_none(grads, refs, strict, create_graph, stage):
    """The mathematically right zeros where an input was unused; errors in strict mode."""
    result = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None and strict:
            raise RuntimeError(_STRICT_NONE[stage].format(i))
        if g is not None and strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        result.append(creation.zeros_like(ref) if g is None else g)
    return tuple(result)


def _call(func, inputs, fn_name, strict):
    is_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_outputs_differentiable(outputs, strict)
    return is_tuple, outputs


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: one backward pass from the outputs, seeded with ``v``."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _fresh_leaves(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _call(func, inputs, "vjp", strict)
        if v is not None:
            v = _prepare_v(v, outputs, outputs_tuple, "vjp", create_graph)
        elif len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor "
                               "with a single element.")
        grads = _grad(outputs, inputs, v, create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "back")
    return (_untuple(_finish(outputs, create_graph), outputs_tuple),
            _untuple(_finish(result, create_graph), inputs_tuple))


def _single_input_v(inputs, v):
    if v is None and (len(inputs) != 1 or inputs[0].numel() != 1):
        raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                           "Tensor with a single element.")


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)`` by the double-backward trick (two backward passes, no forward mode)."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _fresh_leaves(inputs, create_graph, need_graph=True)
        _single_input_v(inputs, v)
        if v is not None:
            v = _prepare_v(v, inputs, inputs_tuple, "jvp", create_graph)
        outputs_tuple, outputs = _call(func, inputs, "jvp", strict)
        # u's value never reaches the result (backward is linear in u); zeros keep it finite.
        u = tuple(creation.zeros_like(out, requires_grad=True) for out in outputs)
        u_times_j = _grad(outputs, inputs, u, create_graph=True)
        if strict:
            for i, g in enumerate(u_times_j):
                if g is None or not g.requires_grad:
                    raise RuntimeError(f"The gradient with respect to input {i} is independent of the inputs of the "
                                       "user-provided function. This is not allowed in strict mode.")
        grads = _grad(u_times_j, u, v, create_graph)
        result = _zeros_for_none(grads, outputs, strict, create_graph, "back_trick")
    return (_untuple(_finish(outputs, create_graph), outputs_tuple),
            _untuple(_finish(result, create_graph), outputs_tuple))


def _check_strategy(vectorize, strategy):
    """Only reverse mode: chibigrad has no forward-mode AD. ``vectorize=True`` (PyTorch's vmap over the rows)
    is accepted and computes the same Jacobian, row by row."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
                                  "implemented for `vectorize=True`.")
    if strategy == "forward-mode":
        raise NotImplementedError("chibigrad has no forward-mode AD: use strategy=\"reverse-mode\" (the default); "
                                  "the Jacobian is the same.")


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """d outputs / d inputs, one backward pass per output element. ``jacobian[i][j]`` has the shape of
    output i followed by the shape of input j (a plain tensor when both are single tensors)."""
    _check_strategy(vectorize, strategy)
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _fresh_leaves(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _call(func, inputs, "jacobian", strict)
        rows = tuple(_jacobian_of(i, out, inputs, create_graph, strict) for i, out in enumerate(outputs))
        rows = tuple(_finish(row, create_graph) for row in rows)
    return _untuple(tuple(_untuple(row, inputs_tuple) for row in rows), outputs_tuple)


def _jacobian_of(i, out, inputs, create_graph, strict):
    """The Jacobian of output ``i``: a tuple with one tensor per input."""
    rows = [[] for _ in inputs]
    flat = out.reshape(-1)
    for k in range(out.numel()):
        grads = _grad((flat[k],), inputs, create_graph=create_graph)
        for j, (g, inp) in enumerate(zip(grads, inputs)):
            if g is None and strict:
                raise RuntimeError(f"Output {i} of the user-provided function is independent of input {j}. This is "
                                   "not allowed in strict mode.")
            if g is not None and strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. This "
                                   "is not allowed in strict mode when create_graph=True.")
            rows[j].append(creation.zeros_like(inp) if g is None else g)
    return tuple(_stack_rows(row, out, inp) for row, inp in zip(rows, inputs))


def _stack_rows(row, out, inp):
    if not row:  # an output with no elements
        return creation.zeros(*out.shape, *inp.shape, dtype=inp.dtype)
    return stack(row, dim=0).view(out.size() + inp.size())


def _single_element(func, fn_name, strict):
    """``func``, checked to return one tensor with one element, as ``hessian``, ``vhp`` and ``hvp`` need."""
    def checked(*inputs):
        is_tuple, outputs = _call(func, inputs, fn_name, strict)
        if is_tuple:
            raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
        if outputs[0].numel() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single "
                               "element")
        return outputs[0]
    return checked


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The second derivatives of a scalar function: the jacobian of its gradient.
    ``hessian[i][j]`` has the shape of input i followed by the shape of input j."""
    _check_strategy(vectorize, outer_jacobian_strategy)
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    scalar = _single_element(func, "hessian", strict)

    def gradient(*inp):
        return _check_gradient_has_graph(jacobian(lambda *x: scalar(*x).squeeze(), inp, create_graph=True), strict)

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict)
    return result if inputs_tuple else result[0][0]


def _gradient_of_scalar(func, inputs, v, fn_name, create_graph, strict):
    """What ``vhp`` and ``hvp`` start from: fresh inputs, the checked ``v``, the scalar output and its gradient
    with a graph (so it can be differentiated once more)."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _fresh_leaves(inputs, create_graph, need_graph=True)
    _single_input_v(inputs, v)
    if v is not None:
        v = _prepare_v(v, inputs, inputs_tuple, fn_name, create_graph)
    out = _single_element(func, fn_name, strict)(*inputs)
    return inputs_tuple, inputs, v, out, _gradient_with_graph(out, inputs, strict)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)``: the gradient with a graph, then a vjp of it."""
    # BEGIN EXERCISE 03.hvp
    with enable_grad():
        inputs_tuple, inputs, v, out, gradient = _gradient_of_scalar(func, inputs, v, "vhp", create_graph, strict)
        grads = _grad(gradient, inputs, v, create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "double_back")
    return _finish((out,), create_graph)[0], _untuple(_finish(result, create_graph), inputs_tuple)
    # END EXERCISE


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)``: the double-backward trick applied to the gradient."""
    # BEGIN EXERCISE 03.hvp
    with enable_grad():
        inputs_tuple, inputs, v, out, gradient = _gradient_of_scalar(func, inputs, v, "hvp", create_graph, strict)
        u = tuple(creation.zeros_like(t, requires_grad=True) for t in inputs)
        u_times_h = _grad(gradient, inputs, u, create_graph=True)
        grads = _grad(u_times_h, u, v, create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "double_back_trick")
    return _finish((out,), create_graph)[0], _untuple(_finish(result, create_graph), inputs_tuple)
    # END EXERCISE


def _gradient_with_graph(out, inputs, strict):
    return _check_gradient_has_graph(_grad((out,), inputs, create_graph=True), strict)


def _check_gradient_has_graph(gradient, strict):
    """A second derivative needs a first one that depends on the inputs; strict mode says so when it does not."""
    for i, g in enumerate(gradient):
        if strict and (g is None or not g.requires_grad):
            raise RuntimeError(f"While computing the hessian, found that the jacobian of the user-provided function "
                               f"with respect to input {i} is independent of the input. This is not allowed in "
                               "strict mode. You should ensure that your function is twice differentiable and that "
                               "the jacobian depends on the inputs (this would be violated by a linear function for "
                               "example).")
    return gradient

from .. import _missing  # noqa: E402

__getattr__ = _missing.module_getattr(__name__, "torch.autograd.functional")
