"""RAdam: Adam whose adaptive step is switched on only once the variance estimate is reliable."""
import math

import numpy as np

from ..tensor import wrap
from .adam import check_betas, step_counter
from .optimizer import Optimizer, check_differentiable, check_hyper_parameters, fused_multiply_add, lerp_


class RAdam(Optimizer):
    """PyTorch's update rule, on numpy arrays (step t counts from 1):

        m, v as in Adam; m_hat = m / (1 - beta1**t)
        rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
        rho_t > 5:  param -= lr * m_hat * sqrt(1 - beta2**t) / (sqrt(v) + eps) * rect(rho_t)
        otherwise:  param -= lr * m_hat                                (plain momentum SGD)

    In the first steps v rests on a handful of gradients; its variance is what
    Adam's warm-up schedules hide, and what ``rect`` corrects.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_hyper_parameters(lr=lr, eps=eps)
        check_betas(betas)
        check_hyper_parameters(weight_decay=weight_decay)
        check_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    def _update(self, param, grad, state, group):
        if not state:
            state["step"] = step_counter()
            state["exp_avg"] = wrap(np.zeros_like(param))
            state["exp_avg_sq"] = wrap(np.zeros_like(param))
        lr, (beta1, beta2), weight_decay = group["lr"], group["betas"], group["weight_decay"]
        grad = -grad if group["maximize"] else grad
        state["step"]._array += 1
        step = state["step"].item()
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param *= 1 - lr * weight_decay
            else:
                grad = fused_multiply_add(param, weight_decay, grad)
        m, v = state["exp_avg"]._array, state["exp_avg_sq"]._array
        lerp_(m, grad, 1 - beta1)
        v *= beta2
        v[...] = fused_multiply_add((1 - beta2) * grad, grad, v)
        bias_correction2 = 1 - beta2 ** step
        m_hat = m / m.dtype.type(1 - beta1 ** step)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive = (1 / (np.sqrt(v) + v.dtype.type(group["eps"]))) * v.dtype.type(bias_correction2 ** 0.5)
            param -= m_hat * m.dtype.type(lr) * adaptive * m.dtype.type(rect)  # a float / tensor is reciprocal * float
        else:
            param -= m_hat * m.dtype.type(lr)
