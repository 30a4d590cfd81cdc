"""Adadelta: steps whose size comes from the recent size of the steps themselves (no learning rate needed)."""
import numpy as np

from ..tensor import wrap
from .adam import step_counter
from .optimizer import Optimizer, check_differentiable, check_hyper_parameters, fused_multiply_add


class Adadelta(Optimizer):
    """PyTorch's update rule, on numpy arrays:

        v = rho * v + (1 - rho) * g * g                      (square_avg)
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta              (acc_delta)
        param -= lr * delta

    The ratio of two running RMS values has the units of the parameter, which
    is why ``lr=1.0`` is the default.
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        check_hyper_parameters(lr=lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_hyper_parameters(eps=eps, weight_decay=weight_decay)
        check_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    def _update(self, param, grad, state, group):
        if not state:
            state["step"] = step_counter()
            state["square_avg"] = wrap(np.zeros_like(param))
            state["acc_delta"] = wrap(np.zeros_like(param))
        rho, eps = group["rho"], param.dtype.type(group["eps"])
        state["step"]._array += 1
        grad = -grad if group["maximize"] else grad
        if group["weight_decay"] != 0:
            grad = fused_multiply_add(param, group["weight_decay"], grad)
        v, u = state["square_avg"]._array, state["acc_delta"]._array
        v *= rho  # square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        v[...] = fused_multiply_add((1 - rho) * grad, grad, v)
        delta = np.sqrt(u + eps) / np.sqrt(v + eps) * grad
        u *= rho
        u[...] = fused_multiply_add((1 - rho) * delta, delta, u)
        param[...] = fused_multiply_add(delta, -group["lr"], param)  # param.add_(delta, alpha=-lr)
