"""NAdam: Adam with Nesterov momentum, each step looking ahead along the next momentum."""
import numpy as np

from ..tensor import wrap
from .adam import check_betas, step_counter
from .optimizer import Optimizer, check_differentiable, check_hyper_parameters, fused_multiply_add, lerp_


class NAdam(Optimizer):
    """PyTorch's update rule, on numpy arrays (step t counts from 1):

        mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))     (a momentum that warms up)
        m, v as in Adam; denom = sqrt(v / (1 - beta2**t)) + eps
        param -= lr * (1 - mu_t) / (1 - prod(mu_1..mu_t)) * g / denom
        param -= lr * mu_{t+1} / (1 - prod(mu_1..mu_{t+1})) * m / denom
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_hyper_parameters(lr=lr, eps=eps)
        check_betas(betas)
        check_hyper_parameters(weight_decay=weight_decay, momentum_decay=momentum_decay)
        check_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def _update(self, param, grad, state, group):
        if not state:
            state["step"] = step_counter()
            state["mu_product"] = wrap(np.ones((), dtype=state["step"]._array.dtype))
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
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * group["momentum_decay"])))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * group["momentum_decay"])))
        mu_product = state["mu_product"]._array
        mu_product *= mu  # a float32 tensor, as in PyTorch: its rounding shows in the steps
        m, v = state["exp_avg"]._array, state["exp_avg_sq"]._array
        lerp_(m, grad, 1 - beta1)
        v *= beta2  # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        v[...] = fused_multiply_add((1 - beta2) * grad, grad, v)
        denom = np.sqrt(v / v.dtype.type(1 - beta2 ** step)) + v.dtype.type(group["eps"])
        mu_product_next = mu_product.item() * mu_next
        param += -lr * (1.0 - mu) / (1.0 - mu_product.item()) * grad / denom  # param.addcdiv_(grad, denom, value=...)
        param += (-lr * mu_next) / (1.0 - mu_product_next) * m / denom
