"""Adam and AdamW: per-element step sizes from running averages of the gradient and its square."""
import numpy as np

from .._dtype import float64, get_default_dtype
from ..tensor import wrap
from .optimizer import Optimizer, check_differentiable, fused_multiply_add, lerp_


class Adam(Optimizer):
    """PyTorch's update rule, on numpy arrays (step t counts from 1):

        g = grad + weight_decay * param    (AdamW instead: param *= 1 - lr * weight_decay)
        m = m + (1 - beta1) * (g - m)      (exp_avg.lerp_(g, 1 - beta1))
        v = beta2 * v + (1 - beta2) * g * g
        param -= lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    The bias corrections undo m and v starting at zero. With ``amsgrad``,
    v in the denominator is the largest v seen so far.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_betas(betas)
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        check_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _update(self, param, grad, state, group):
        if not state:
            _init_state(state, param, group["amsgrad"])
        lr, (beta1, beta2), eps, weight_decay = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        if group["maximize"]:
            grad = -grad
        state["step"]._array += 1
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                param *= 1 - lr * weight_decay
            else:
                grad = fused_multiply_add(param, weight_decay, grad)  # grad.add(param, alpha=weight_decay)
        m, v = state["exp_avg"]._array, state["exp_avg_sq"]._array
        lerp_(m, grad, 1 - beta1)  # exp_avg.lerp_(grad, 1 - beta1)
        v *= beta2  # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        v[...] = fused_multiply_add((1 - beta2) * grad, grad, v)
        step = state["step"].item()
        step_size = lr / (1 - beta1 ** step)
        bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
        if group["amsgrad"]:
            v = np.maximum(state["max_exp_avg_sq"]._array, v, out=state["max_exp_avg_sq"]._array)
        denom = np.sqrt(v) / bias_correction2_sqrt + eps
        param -= step_size * m / denom  # param.addcdiv_(exp_avg, denom, value=-step_size)


def check_betas(betas):
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


def step_counter():
    """The step count PyTorch keeps in each parameter's state: a 0-d float tensor, float32
    (float64 when that is the default dtype), on the CPU."""
    return wrap(np.zeros((), dtype=np.float64 if get_default_dtype() is float64 else np.float32))


def _init_state(state, param, amsgrad):
    state["step"] = step_counter()
    state["exp_avg"] = wrap(np.zeros_like(param))
    state["exp_avg_sq"] = wrap(np.zeros_like(param))
    if amsgrad:
        state["max_exp_avg_sq"] = wrap(np.zeros_like(param))


class AdamW(Adam):
    """Adam with decoupled weight decay: shrink the weights directly instead of adding to the gradient
    (so the decay is not rescaled by Adam's per-element step size)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
