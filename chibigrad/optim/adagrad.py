"""Adagrad: per-element step sizes that shrink with the sum of all squared gradients so far."""
import numpy as np

from ..tensor import wrap
from .adam import step_counter
from .optimizer import Optimizer, check_differentiable, fused_multiply_add


class Adagrad(Optimizer):
    """PyTorch's update rule, on numpy arrays (step t counts from 1):

        g = grad + weight_decay * param
        sum = sum + g * g
        clr = lr / (1 + (t - 1) * lr_decay)
        param -= clr * g / (sqrt(sum) + eps)

    Weights with large or frequent gradients slow down, rare ones keep big
    steps (good for sparse features); as ``sum`` only grows, every step size
    decays towards zero, which is what RMSprop and Adam later fixed.
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if lr_decay < 0.0:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if initial_accumulator_value < 0.0:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))
        # Unlike the other optimizers, Adagrad's state exists from the start (state_dict shows it before any step)
        for group in self.param_groups:
            for p in group["params"]:
                _init_state(self.state[p], p._array, initial_accumulator_value)

    def _update(self, param, grad, state, group):
        if not state:  # a parameter added later with add_param_group
            _init_state(state, param, self.defaults["initial_accumulator_value"])
        state["step"]._array += 1
        step = state["step"].item()
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = fused_multiply_add(param, group["weight_decay"], grad)  # grad.add(param, alpha=weight_decay)
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        total = state["sum"]._array
        total[...] = fused_multiply_add(grad, grad, total)  # state_sum.addcmul_(grad, grad, value=1)
        std = np.sqrt(total) + group["eps"]  # state_sum.sqrt().add_(eps)
        param -= clr * grad / std  # param.addcdiv_(grad, std, value=-clr)


def _init_state(state, param, initial_accumulator_value):
    state["step"] = step_counter()
    state["sum"] = wrap(np.full_like(param, initial_accumulator_value))
