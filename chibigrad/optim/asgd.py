"""ASGD: SGD that also keeps a running average of the parameters (Polyak averaging) in its state."""
import numpy as np

from ..tensor import wrap
from .adam import step_counter
from .optimizer import Optimizer, check_differentiable, check_hyper_parameters, fused_multiply_add


class ASGD(Optimizer):
    """PyTorch's update rule, on numpy arrays (step t counts from 1):

        param *= 1 - lambd * eta;  param -= eta * g
        ax = param if mu == 1 else ax + mu * (param - ax)        (the average, in state["ax"])
        eta = lr / (1 + lambd * lr * t) ** alpha;  mu = 1 / max(1, t - t0)

    Averaging starts at step ``t0``; the parameters themselves are not replaced
    by the average: copy ``state["ax"]`` in to evaluate it.
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        check_hyper_parameters(lr=lr, weight_decay=weight_decay)
        check_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _update(self, param, grad, state, group):
        if not state:
            state["step"] = step_counter()
            scalar = state["step"]._array.dtype
            state["eta"] = wrap(np.asarray(group["lr"], dtype=scalar))
            state["mu"] = wrap(np.ones((), dtype=scalar))
            state["ax"] = wrap(np.zeros_like(param))
        lr, lambd = group["lr"], group["lambd"]
        grad = -grad if group["maximize"] else grad
        state["step"]._array += 1
        step = state["step"].item()
        if group["weight_decay"] != 0:
            grad = fused_multiply_add(param, group["weight_decay"], grad)
        eta = state["eta"].item()
        param *= 1 - lambd * eta
        param[...] = fused_multiply_add(grad, -eta, param)  # param.add_(grad, alpha=-eta)
        ax, mu = state["ax"]._array, state["mu"]._array
        if mu.item() != 1:
            ax += (param - ax) * mu
        else:
            ax[...] = param
        state["eta"]._array[...] = lr / ((1 + lambd * lr * step) ** group["alpha"])
        state["mu"]._array[...] = 1 / max(1, step - group["t0"])
