"""RMSprop: divide each step by a running root-mean-square of recent gradients."""
import numpy as np

from ..tensor import wrap
from .adam import step_counter
from .optimizer import Optimizer, check_differentiable, fused_multiply_add, lerp_


class RMSprop(Optimizer):
    """PyTorch's update rule, on numpy arrays (comments give the PyTorch tensor op):

        g = grad + weight_decay * param
        v = alpha * v + (1 - alpha) * g * g           (square_avg)
        avg = sqrt(v) + eps                           (centered: sqrt(v - m * m) + eps, m = mean of g)
        param -= lr * g / avg                         (momentum: buf = momentum * buf + g / avg; param -= lr * buf)

    Dividing by the recent size of the gradient gives each weight a step of
    about ``lr`` whatever the scale of its gradient; ``centered`` divides by
    the variance instead of the raw second moment.
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if alpha < 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        check_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    def _update(self, param, grad, state, group):
        if not state:
            _init_state(state, param, group)
        if group["maximize"]:
            grad = -grad
        state["step"]._array += 1
        alpha, eps, momentum = group["alpha"], group["eps"], group["momentum"]
        if group["weight_decay"] != 0:
            grad = fused_multiply_add(param, group["weight_decay"], grad)  # grad.add(param, alpha=weight_decay)
        v = state["square_avg"]._array
        v *= alpha  # square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        v[...] = fused_multiply_add((1 - alpha) * grad, grad, v)
        if group["centered"]:
            m = state["grad_avg"]._array
            lerp_(m, grad, 1 - alpha)  # grad_avg.lerp_(grad, 1 - alpha)
            avg = np.sqrt(fused_multiply_add(-m, m, v))  # square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = np.sqrt(v)
        avg += eps
        if momentum > 0:
            buf = state["momentum_buffer"]._array
            buf *= momentum  # buf.mul_(momentum).addcdiv_(grad, avg)
            buf += grad / avg
            param[...] = fused_multiply_add(buf, -group["lr"], param)  # param.add_(buf, alpha=-lr)
        else:
            param -= group["lr"] * grad / avg  # param.addcdiv_(grad, avg, value=-lr)


def _init_state(state, param, group):
    """What RMSprop remembers for each parameter, made at its first step, in PyTorch's key order."""
    state["step"] = step_counter()
    state["square_avg"] = wrap(np.zeros_like(param))
    if group["momentum"] > 0:
        state["momentum_buffer"] = wrap(np.zeros_like(param))
    if group["centered"]:
        state["grad_avg"] = wrap(np.zeros_like(param))
