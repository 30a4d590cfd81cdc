"""Rprop: each weight keeps its own step size, grown while its gradient keeps its sign, shrunk when it flips."""
import numpy as np

from ..tensor import wrap
from .adam import step_counter
from .optimizer import Optimizer, check_differentiable, check_hyper_parameters


class Rprop(Optimizer):
    """PyTorch's update rule, on numpy arrays (only the sign of the gradient is used):

        same sign as last step: step_size *= etaplus; flipped: step_size *= etaminus and
        this step's gradient counts as 0; step_size stays within step_sizes
        param -= sign(g) * step_size

    Meant for full-batch training: with mini-batches the signs flip from noise.
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        check_hyper_parameters(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        check_differentiable(differentiable)
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _update(self, param, grad, state, group):
        if not state:
            state["step"] = step_counter()
            state["prev"] = wrap(np.zeros_like(param))
            state["step_size"] = wrap(np.full_like(grad, group["lr"]))
        (etaminus, etaplus), (smallest, largest) = group["etas"], group["step_sizes"]
        grad = -grad if group["maximize"] else grad
        state["step"]._array += 1
        prev, step_size = state["prev"]._array, state["step_size"]._array
        sign = np.sign(grad * prev)
        factor = np.select([sign > 0, sign < 0], [etaplus, etaminus], 1).astype(param.dtype)
        step_size *= factor
        np.clip(step_size, smallest, largest, out=step_size)
        grad = np.where(factor == param.dtype.type(etaminus), 0, grad).astype(param.dtype)
        param -= np.sign(grad) * step_size  # param.addcmul_(grad.sign(), step_size, value=-1)
        prev[...] = grad
