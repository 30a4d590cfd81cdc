"""gradcheck: test a backward against finite differences.

A backward function is a claim about derivatives, and central differences
check it without trusting any of it:

    d out / d x[k]  ~  (f(x + eps e_k) - f(x - eps e_k)) / (2 eps)

Perturbing each input element in turn gives the *numerical* Jacobian. The
*analytical* one comes from the backward being tested: one vector-Jacobian
product per output element, with a one-hot ``grad_outputs``, gives one row of
d out / d x. The two must agree within ``atol + rtol * |numerical|``.

Use float64: in float32 the rounding error of f, divided by 2 * eps, is
larger than most derivatives, so even a correct backward fails.
As in PyTorch, the Jacobians are shown transposed: one row per input element,
one column per output element.
"""
import warnings

import numpy as np

from .. import _device


class GradcheckError(RuntimeError):
    """The analytical and numerical Jacobians disagree."""


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """True if ``func``'s backward matches central differences at ``inputs``.

    Checks the gradient with respect to every input that requires grad, for
    every output that requires grad. On a mismatch, raises ``GradcheckError``
    (or returns False when ``raise_exception=False``). ``check_forward_ad``
    checks forward mode too (the ``jvp`` rules), ``check_backward_ad=False``
    skips backward, ``check_grad_dtypes`` checks that each gradient has its
    input's dtype; as in PyTorch, zero output gradients must give zero input
    gradients (an undefined gradient reaches a backward as zeros in chibigrad,
    so that also covers ``check_undefined_grad``). chibigrad's backward is deterministic
    (``nondet_tol`` has nothing to tolerate) and always checks every element
    (``fast_mode`` checks a random projection in PyTorch: the same answer).
    """
    _refuse_unsupported(check_batched_grad=check_batched_grad,
                        check_batched_forward_grad=check_batched_forward_grad, masked=masked)
    inputs = _as_tuple(inputs)
    diff_inputs = _check_inputs(inputs)
    all_outputs = _tensors(func(*inputs))
    picked = [n for n, out in enumerate(all_outputs) if out.requires_grad]
    if not picked:  # nothing to differentiate: the function must then be flat
        picked = range(len(all_outputs))
        numerical = _numerical_jacobians(func, inputs, diff_inputs, all_outputs, picked, eps)
        if any(np.any(j != 0) for per_output in numerical for j in per_output):
            return _fail("Numerical gradient for function expected to be zero", raise_exception)
        return True
    numerical = _numerical_jacobians(func, inputs, diff_inputs, all_outputs, picked, eps)
    for o, n in enumerate(picked):
        analytical = _analytical_jacobians(all_outputs[n], diff_inputs) if check_backward_ad else numerical[o]
        for i, (a, num) in enumerate(zip(analytical, numerical[o])):
            if not np.allclose(a, num, rtol=rtol, atol=atol):
                return _fail(_mismatch_message(o, i, num, a), raise_exception)
    if check_backward_ad and check_grad_dtypes:
        for x, g in zip(diff_inputs, _input_grads([all_outputs[n] for n in picked], diff_inputs)):
            if g is not None and g.dtype != x.dtype:
                return _fail("Gradient has dtype mismatch", raise_exception)
    if check_backward_ad and not _zero_grads_give_zero(all_outputs, picked, diff_inputs):
        return _fail("backward not multiplied by grad_output", raise_exception)
    if check_forward_ad:
        forward = _forward_jacobians(func, inputs, diff_inputs, all_outputs, picked)
        for o in range(len(picked)):
            for i, (a, num) in enumerate(zip(forward[o], numerical[o])):
                if not np.allclose(a, num, rtol=rtol, atol=atol):
                    return _fail(_mismatch_message(o, i, num, a, "Jacobian computed with forward mode"),
                                 raise_exception)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0, check_undefined_grad=True,
                  check_grad_dtypes=False, check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck the backward itself: second derivatives via ``create_graph=True``.

    The function checked maps (inputs, grad_outputs) to the input gradients
    that backward computes. Its Jacobian is only right if backward is built
    from differentiable operations (not ``detach()``, not numpy).
    ``grad_outputs`` default to random values in [-1, 1). (chibigrad's arrays
    are always contiguous: ``gen_non_contig_grad_outputs`` changes nothing.)
    """
    _refuse_unsupported(check_batched_grad=check_batched_grad, check_fwd_over_rev=check_fwd_over_rev,
                        masked=masked)
    if not check_rev_over_rev:
        return True
    from . import grad as autograd_grad
    from ..creation import rand

    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = [o for o in _tensors(func(*inputs)) if o.requires_grad]
        grad_outputs = tuple((rand(o.shape, dtype=o.dtype, device=o.device) * 2 - 1).requires_grad_() for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(grad_outputs)

    def first_derivative(*args):
        xs, gs = args[:-n], args[-n:]
        outputs = [o for o in _tensors(func(*xs)) if o.requires_grad]
        wrt = [x for x in xs if _is_tensor(x) and x.requires_grad]
        grads = autograd_grad(outputs, wrt, gs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes)


def _refuse_unsupported(**options):
    """Options whose check chibigrad does not have: refused rather than silently skipped."""
    asked = [name for name, value in options.items() if value]
    if asked:
        raise NotImplementedError(f"chibigrad's gradcheck does not implement {', '.join(asked)}=True")


def _input_grads(outputs, diff_inputs, zero=False):
    from . import grad as autograd_grad
    from ..creation import ones_like, zeros_like
    seeds = [(zeros_like if zero else ones_like)(o) for o in outputs]
    return autograd_grad(outputs, diff_inputs, seeds, retain_graph=True, allow_unused=True)


def _zero_grads_give_zero(all_outputs, picked, diff_inputs):
    """A backward is linear in its output gradients: zeros in, zeros (or nothing) out."""
    grads = _input_grads([all_outputs[n] for n in picked], diff_inputs, zero=True)
    return all(g is None or not g.any().item() for g in grads)


def _check_inputs(inputs):
    """The inputs to differentiate with respect to; warn about low precision."""
    diff_inputs = []
    for idx, x in enumerate(inputs):
        if _is_tensor(x) and x.requires_grad:
            if x.dtype.name != "float64":
                warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or "
                              "complex. This check will likely fail if all the inputs are not of double precision "
                              "floating point or complex. ", stacklevel=3)
            diff_inputs.append(x)
    if not diff_inputs:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    return diff_inputs


def _numerical_jacobians(func, inputs, diff_inputs, outputs, picked, eps):
    """``J[o][i][k, :]``: output ``picked[o]``'s change per unit change of element k of input i."""
    jacobians = [[np.zeros((x.numel(), outputs[n].numel()),
                           dtype=np.result_type(outputs[n]._array.dtype, np.float32)) for x in diff_inputs]
                 for n in picked]
    for i, x in enumerate(diff_inputs):
        data = x._array  # perturbed in place, behind autograd's back, then restored exactly
        for k, idx in enumerate(np.ndindex(data.shape)):
            orig = data[idx].copy()
            data[idx] = orig + eps
            plus = _evaluate(func, inputs, picked)
            data[idx] = orig - eps
            minus = _evaluate(func, inputs, picked)
            data[idx] = orig
            for o, (p, m) in enumerate(zip(plus, minus)):
                jacobians[o][i][k] = ((p - m) / (2 * eps)).ravel()
    return jacobians


def _evaluate(func, inputs, picked):
    """Host copies of the picked outputs (an output may be a view of a perturbed input)."""
    outputs = _tensors(func(*inputs))
    return [_host_copy(outputs[n]._array) for n in picked]


def _host_copy(array):
    """A numpy copy of an array on any device: the Jacobians are compared on the host."""
    return array.copy() if type(array) is np.ndarray else _device.to_device(array, _device.cpu)


def _analytical_jacobians(output, diff_inputs):
    """One backward per element j of ``output``: column j of each input's Jacobian."""
    from . import grad as autograd_grad
    from ..creation import zeros_like

    jacobians = [np.zeros((x.numel(), output.numel()), dtype=x._array.dtype) for x in diff_inputs]
    for j in range(output.numel()):
        one_hot = zeros_like(output)
        one_hot._array.reshape(-1)[j] = 1
        grads = autograd_grad(output, diff_inputs, one_hot, retain_graph=True, allow_unused=True)
        for jacobian, g in zip(jacobians, grads):
            if g is not None:
                jacobian[:, j] = _host_copy(g._array).ravel()
    return jacobians


def _forward_jacobians(func, inputs, diff_inputs, outputs, picked):
    """One forward-mode pass per element k of each input (a one-hot tangent): row k of its Jacobians."""
    from . import forward_ad
    from ..creation import zeros_like

    jacobians = [[np.zeros((x.numel(), outputs[n].numel()), dtype=x._array.dtype) for x in diff_inputs]
                 for n in picked]
    for i, x in enumerate(diff_inputs):
        for k in range(x.numel()):
            tangent = zeros_like(x)
            tangent._array.reshape(-1)[k] = 1
            with forward_ad.dual_level():
                results = _tensors(func(*[forward_ad.make_dual(a, tangent) if a is x else a for a in inputs]))
                for o, n in enumerate(picked):
                    column = forward_ad.unpack_dual(results[n]).tangent
                    if column is not None:
                        jacobians[o][i][k] = _host_copy(column._array).ravel()
    return jacobians


def _mismatch_message(output_idx, input_idx, numerical, analytical, what="Jacobian"):
    from ..tensor import wrap
    return (f"{what} mismatch for output {output_idx} with respect to input {input_idx},\n"
            f"numerical:{wrap(numerical)}\nanalytical:{wrap(analytical)}\n")


def _fail(message, raise_exception):
    if raise_exception:
        raise GradcheckError(message)
    return False


def _is_tensor(x):
    from ..tensor import Tensor
    return isinstance(x, Tensor)


def _tensors(outputs):
    return [o for o in _as_tuple(outputs) if _is_tensor(o)]


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)
