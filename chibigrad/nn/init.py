"""torch.nn.init: fill parameters in place with the usual starting values.

Every function writes under ``no_grad`` (initialising is not part of any
graph) and draws from chibigrad's global generator, so ``manual_seed``
makes a model's initial weights repeatable.
"""
import math
import warnings

import numpy as np

from ..autograd.grad_mode import no_grad
from ..creation import _generator
from ..tensor import wrap


def _assign(tensor, values):
    """Copy ``values`` into ``tensor`` in place, outside autograd; returns ``tensor`` as torch's init does."""
    with no_grad():
        tensor.copy_(wrap(np.asarray(values, dtype=tensor._array.dtype)))
    return tensor


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    return _assign(tensor, (generator or _generator[0]).uniform(a, b, tensor.shape))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    return _assign(tensor, (generator or _generator[0]).normal(mean, std, tensor.shape))


def constant_(tensor, val):
    return _assign(tensor, np.full(tensor.shape, val))


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def calculate_gain(nonlinearity, param=None):
    """The factor that keeps activations' variance steady through a layer followed by ``nonlinearity``."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                        "conv_transpose3d", "sigmoid"):
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    """Inputs and outputs per unit: (in_features, out_features) for a Linear weight."""
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field = int(np.prod(tensor.shape[2:]))
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot: U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He: U(-b, b) with b = gain * sqrt(3 / fan); nn.Linear uses a=sqrt(5), i.e. b = 1/sqrt(fan_in)."""
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    if tensor.numel() == 0:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def orthogonal_(tensor, gain=1, generator=None):
    """Saxe et al.: the Q of a QR decomposition of a normal matrix, signs fixed by R's diagonal so
    that Q is uniformly distributed; a tensor of more than 2 dims is flattened after its first."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor  # PyTorch: no-op
    rows, cols = tensor.shape[0], tensor.numel() // tensor.shape[0]
    flattened = (generator or _generator[0]).normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flattened = flattened.T
    q, r = np.linalg.qr(flattened)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _assign(tensor, gain * q.reshape(tensor.shape))
