"""Gradient clipping: rescale or clamp ``.grad`` in place before ``optimizer.step()``.

Clipping by norm keeps the gradient's direction and caps its length, the
usual guard against a rare huge step (exploding gradients in RNNs, early
transformer training).
"""
import numpy as np

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor, wrap


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale all gradients by ``min(1, max_norm / (total_norm + 1e-6))``; return the total norm.

    The total norm is the norm of all gradients concatenated into one
    vector (the norm of the per-tensor norms). ``foreach`` is accepted for
    PyTorch compatibility; there is only one implementation here.
    """
    grads = _grads(parameters)
    norm_type = float(norm_type)
    if not grads:
        return wrap(np.asarray(0.0, dtype=np.float32))
    norms = np.stack([_vector_norm(g._array, norm_type) for g in grads]).astype(grads[0]._array.dtype)
    total_norm = _vector_norm(norms, norm_type)
    if error_if_nonfinite and not np.isfinite(total_norm):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    # PyTorch multiplies even when the factor is 1, avoiding a branch (and a GPU sync)
    clip_coef = np.minimum(max_norm / (total_norm + 1e-6), 1.0).astype(norms.dtype)
    with no_grad():
        for g in grads:
            g.mul_(wrap(clip_coef))
    return wrap(total_norm)


def _vector_norm(x, p):
    x = np.abs(x)
    if p == float("inf"):
        return x.max()
    if p == 2:
        return np.sqrt((x * x).sum())
    return (x ** p).sum() ** (1 / p)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element into ``[-clip_value, clip_value]``, in place."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)

