"""Stochastic gradient descent, with optional momentum, Nesterov and weight decay."""
from ..tensor import wrap
from .optimizer import Optimizer, check_differentiable


class SGD(Optimizer):
    """PyTorch's update rule, on numpy arrays (comments give the PyTorch tensor op):

        g = grad + weight_decay * param
        buf = g                                  (first step)
        buf = momentum * buf + (1 - dampening) * g   (later steps)
        g = g + momentum * buf if nesterov else buf
        param = param - lr * g
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def _update(self, param, grad, state, group):
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param  # grad.add(param, alpha=weight_decay)
        momentum = group["momentum"]
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = wrap(grad.copy())  # grad.clone()
            else:
                buf._array *= momentum  # buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                dampening = group["dampening"]
                buf._array += grad if dampening == 0 else (1 - dampening) * grad  # 1 * grad: no scaled copy
            grad = grad + momentum * buf._array if group["nesterov"] else buf._array
        param -= group["lr"] * grad  # param.add_(grad, alpha=-lr)
