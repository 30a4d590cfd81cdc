"""Adamax: Adam with the infinity norm: divide by the largest recent gradient, not the RMS."""
import numpy as np

from ..tensor import wrap
from .adam import check_betas, step_counter
from .optimizer import Optimizer, check_differentiable, check_hyper_parameters, fused_multiply_add, lerp_


class Adamax(Optimizer):
    """PyTorch's update rule, on numpy arrays (step t counts from 1):

        g = grad + weight_decay * param
        m = m + (1 - beta1) * (g - m)               (exp_avg.lerp_(g, 1 - beta1))
        u = max(beta2 * u, |g| + eps)               (exp_inf)
        param -= lr / (1 - beta1**t) * m / u

    ``u`` decays slowly but jumps to any large gradient at once, so a step is
    never bigger than about ``lr``.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_hyper_parameters(lr=lr, eps=eps)
        check_betas(betas)
        check_hyper_parameters(weight_decay=weight_decay)
        check_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def _update(self, param, grad, state, group):
        if not state:
            state["step"] = step_counter()
            state["exp_avg"] = wrap(np.zeros_like(param))
            state["exp_inf"] = wrap(np.zeros_like(param))
        (beta1, beta2), eps = group["betas"], group["eps"]
        grad = -grad if group["maximize"] else grad
        state["step"]._array += 1
        if group["weight_decay"] != 0:
            grad = fused_multiply_add(param, group["weight_decay"], grad)  # grad.add(param, alpha=weight_decay)
        m, u = state["exp_avg"]._array, state["exp_inf"]._array
        lerp_(m, grad, 1 - beta1)
        u *= beta2  # torch.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
        np.maximum(u, np.abs(grad) + grad.dtype.type(eps), out=u)
        clr = group["lr"] / (1 - beta1 ** state["step"].item())
        param -= clr * m / u  # param.addcdiv_(exp_avg, exp_inf, value=-clr)
