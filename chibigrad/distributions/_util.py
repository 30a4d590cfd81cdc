"""Helpers the distributions share, as torch.distributions.utils has them."""
import numbers

import numpy as np

from ..creation import tensor
from ..tensor import Tensor


def broadcast_all(*values):
    """Tensors of one shape from tensors and Python numbers (numbers take the tensors' dtype)."""
    like = next((v for v in values if isinstance(v, Tensor)), None)
    as_tensors = [v if isinstance(v, Tensor) else tensor(float(v), dtype=None if like is None else like.dtype)
                  for v in values]
    for v in values:
        if not isinstance(v, (Tensor, numbers.Number)):
            raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                             "implementing __torch_function__.")
    shape = _broadcast_shape([t.shape for t in as_tensors])
    return tuple(t if t.shape == shape else t.expand(shape) for t in as_tensors)  # PyTorch keeps a fitting tensor


def _broadcast_shape(shapes):
    ndim = max(len(s) for s in shapes)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    return tuple(max(sizes) for sizes in zip(*padded))


def logits_to_probs(logits, is_binary=False):
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def probs_to_logits(probs, is_binary=False):
    """Logits from probabilities clamped away from 0 and 1 (by the dtype's eps), as PyTorch does."""
    eps = float(np.finfo(probs._array.dtype).eps)
    clamped = probs.clamp(min=eps, max=1 - eps)
    return clamped.log() - (-clamped).log1p() if is_binary else clamped.log()
