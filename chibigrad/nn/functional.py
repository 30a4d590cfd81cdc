"""torch.nn.functional: the stateless versions of the layers and losses.

Modules hold parameters and call these; these check their arguments the way
PyTorch does (same messages) and hand the work to a differentiable op.
"""
import warnings

import numpy as np

from .. import _device, linalg, ops
from ..autograd.grad_mode import no_grad
from ..ops import conv
from ..ops.pointwise import DivScalar
from ..ops.reduction import NormScalarDim
from ..ops._util import check_broadcast, check_device
from ..creation import _generator, zeros_like
from ..tensor import Tensor, wrap
from . import _functions as fn


# ---- activations ------------------------------------------------------------------
def _maybe_inplace(op, input, inplace):
    """``inplace=True`` overwrites ``input`` and records the op as an in-place one (ReLU(inplace=True))."""
    return input._recorded_inplace(op) if inplace else op(input)


def relu(input, inplace=False):
    return _maybe_inplace(ops.relu, input, inplace)


def tanh(input):
    return ops.tanh(input)


def sigmoid(input):
    return ops.sigmoid(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    if inplace:
        return input._recorded_inplace(lambda a: fn.LeakyReluInplace.apply(a, negative_slope))
    return fn.LeakyRelu.apply(input, negative_slope)


def silu(input, inplace=False):
    return _maybe_inplace(fn.Silu.apply, input, inplace)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return fn.Gelu.apply(input, approximate)


def softplus(input, beta=1, threshold=20):
    return fn.Softplus.apply(input, beta, threshold)


def logsigmoid(input):
    return fn.LogSigmoid.apply(input)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input`` divided by its ``p``-norm along ``dim`` (at least ``eps``), PyTorch's composition of ops."""
    if out is not None:
        raise NotImplementedError("chibigrad's F.normalize has no out=")
    denom = input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    return input / denom


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim``. As in aten, each is divided by
    its norm first (at least ``eps``, clamped outside the graph), which keeps the result in [-1, 1]."""
    if not (x1.dtype.is_floating_point or x2.dtype.is_floating_point):
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{x1.dtype.scalar_name}")
    shape = np.broadcast_shapes(x1.shape, x2.shape)
    x1, x2 = (x if x.shape == shape else x.expand(shape) for x in (x1, x2))
    x1_norm = linalg.vector_norm(x1, 2, dim=dim, keepdim=True).clone()
    x2_norm = linalg.vector_norm(x2, 2, dim=dim, keepdim=True).clone()
    with no_grad():
        x1_norm.clamp_(min=eps)
        x2_norm.clamp_(min=eps)
    return ((x1 / x1_norm) * (x2 / x2_norm)).sum(dim)


def _reduce(loss, reduction):
    """aten's apply_loss_reduction."""
    _check_reduction(reduction)
    return loss if reduction == "none" else loss.sum() if reduction == "sum" else loss.mean()


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The p-norm of ``x1 - x2 + eps`` over the last dimension (eps keeps the gradient finite where
    the two are equal)."""
    return NormScalarDim.apply(x1 - x2 + eps, p, max(x1.ndim, x2.ndim) - 1, keepdim)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """``max(d(a, p) - d(a, n) + margin, 0)``: the anchor nearer its positive than its negative by ``margin``."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = ops.minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + dist_pos - dist_neg).clamp(min=0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """The triplet loss with any distance (``pairwise_distance`` when None)."""
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead")
    distance = distance_function if distance_function is not None else pairwise_distance
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = ops.minimum(dist_neg, distance(positive, negative))
    return _reduce((margin + dist_pos - dist_neg).clamp(min=0), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """``1 - cos`` for pairs labelled 1, ``max(cos - margin, 0)`` for pairs labelled -1 (aten's formula)."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    dim = target.ndim
    prod_sum = (input1 * input2).sum(dim)
    denom = (((input1 * input1).sum(dim) + 1e-12) * ((input2 * input2).sum(dim) + 1e-12)).sqrt()
    cos = prod_sum / denom
    zeros = zeros_like(cos)
    loss = ops.where(target == 1, 1 - cos, zeros) + ops.where(target == -1, (cos - margin).clamp(min=0), zeros)
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """``max(-target * (input1 - input2) + margin, 0)``: input1 ranked above input2 where target is 1."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """``input`` where target is 1, ``max(margin - input, 0)`` where it is -1."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    zeros = zeros_like(input)
    loss = ops.where(target != 1, (margin - input).clamp(min=0), zeros) + ops.where(target != -1, input, zeros)
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL(target || exp(input)) term by term, ``target * (log target - input)``; ``input`` holds
    log-probabilities (and ``target`` too with ``log_target``). ``'batchmean'`` divides the sum by the
    batch size, the KL divergence's definition; ``'mean'`` (the default) divides by every element."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = ops.xlogy(target, target) - target * input
    if reduction == "batchmean":
        loss = loss.sum()
        return loss / input.size(0) if input.ndim != 0 else loss
    _check_reduction(reduction)
    return loss if reduction == "none" else loss.sum() if reduction == "sum" else loss.mean()


def _softmax_dim(name, ndim, stacklevel):
    """PyTorch's old guess for a missing ``dim``, with its deprecation warning."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as "
                  "an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim, _stacklevel)
    return ops.softmax(input if dtype is None else input.to(dtype), dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim, _stacklevel)
    return ops.log_softmax(input if dtype is None else input.to(dtype), dim)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p),
    so the expected value is unchanged and eval mode can skip the layer.

    The mask comes from chibigrad's global generator, so ``manual_seed``
    (and checkpointing's RNG replay) reproduce it.
    """
    return _dropout(input, p, training, inplace, input.shape)


def _dropout(input, p, training, inplace, mask_shape):
    """Dropout with one random draw per element of ``mask_shape`` (broadcast over the input)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    keep = _generator[0].random(mask_shape, dtype=np.float32) >= p
    mask = keep.astype(input._array.dtype) * (1 / (1 - p) if p < 1 else 0)
    mask = _device.to_device(mask, input.device)  # drawn on the host, like every random number here
    return input._recorded_inplace(ops.mul, wrap(mask)) if inplace else input * wrap(mask)


# ---- linear and embedding -------------------------------------------------------------
def linear(input, weight, bias=None):
    """``input @ weight.T + bias``: AddmmBackward0 (or MmBackward0) and TBackward0, as in PyTorch."""
    return ops.linear(input, weight, bias)


def embedding(input, weight, padding_idx=None):
    """Rows of ``weight`` picked by the integer tensor ``input``."""
    if input.dtype.is_floating_point or input.dtype.name == "bool":
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.type()} instead (while checking arguments for embedding)")
    check_device("_index_select", ("self", weight), ("index", input))  # PyTorch's embedding is an index_select
    idx = input._array
    if idx.size and (idx.min() < 0 or idx.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    return fn.Embedding.apply(weight, idx, padding_idx)


# ---- normalization ------------------------------------------------------------------
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[input.ndim - k:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, normalized_shape))}], but got input of size"
                           f"{list(input.shape)}")
    check_device("_native_layer_norm", ("input", input), ("weight", weight), ("bias", bias))
    return fn.NativeLayerNorm.apply(input, weight, bias, k, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise each sample over groups of channels (and all positions): batch-size independent."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    if input.shape[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    return fn.NativeGroupNorm.apply(input, weight, bias, num_groups, eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalise each sample's channels on their own: group_norm with a group per channel. (PyTorch
    records batch_norm's nodes; running statistics are not implemented here.)"""
    if running_mean is not None or running_var is not None or not use_input_stats:
        raise NotImplementedError("chibigrad's instance_norm has no running statistics (track_running_stats)")
    return group_norm(input, input.shape[1], weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x**2) + eps) * weight`` over the last dims, as aten composes it."""
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    eps = np.finfo(input._array.dtype).eps.item() if eps is None else eps
    out = input * (input.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalise each channel with the batch's statistics (training) or the running ones (eval).

    In training the running averages, when given, move towards the batch's
    mean and *unbiased* variance by ``momentum``, in place.
    """
    dims = (0,) + tuple(range(2, input.ndim))
    x = input._array
    if running_mean is not None and running_mean.numel() != input.shape[1]:
        raise RuntimeError(f"running_mean should contain {input.shape[1]} elements not {running_mean.numel()}")
    if not training:
        return fn.NativeBatchNorm.apply(input, weight, bias, running_mean._array, running_var._array, False, eps)
    count = x.size // x.shape[1]
    if count == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
    mean, var = x.mean(axis=dims), x.var(axis=dims)
    if running_mean is not None:
        _update_running(running_mean, mean, momentum)
        _update_running(running_var, var * count / (count - 1), momentum)
    return fn.NativeBatchNorm.apply(input, weight, bias, mean, var, True, eps)


def _update_running(running, batch_value, momentum):
    """running = (1 - momentum) * running + momentum * batch_value, in place (a buffer, not in any graph)."""
    running._array *= 1 - momentum
    running._array += momentum * batch_value
    running._bump_version()


# ---- losses -------------------------------------------------------------------------
def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_target_shape(input, target):
    """Regression losses warn when shapes differ, as broadcasting is then usually a bug."""
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)
    check_broadcast(input.shape, target.shape)


def mse_loss(input, target, reduction="mean"):
    """Mean (or sum) of squared differences."""
    _check_target_shape(input, target)
    _check_reduction(reduction)
    return fn.MseLoss.apply(input, target, reduction)


def l1_loss(input, target, reduction="mean"):
    """Mean (or sum) of absolute differences. PyTorch composes it of sub, abs and mean (or sum),
    so its graph shows those nodes (MeanBackward0), not an L1LossBackward."""
    _check_target_shape(input, target)
    _check_reduction(reduction)
    losses = (input - target).abs()
    return losses if reduction == "none" else losses.mean() if reduction == "mean" else losses.sum()


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """Squared error below ``beta``, absolute error above (see ``_functions.SmoothL1Loss``)."""
    _check_target_shape(input, target)
    _check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:  # no quadratic part left: PyTorch computes the L1 loss
        return l1_loss(input, target, reduction)
    return fn.SmoothL1Loss.apply(input, target, reduction, beta)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """Squared error below ``delta``, ``delta`` times the absolute error above (see ``_functions.HuberLoss``)."""
    _check_target_shape(input, target)
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    return fn.HuberLoss.apply(input, target, reduction, delta)


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """``-input[i, target[i]]`` averaged (weighted by class ``weight``); ``input`` holds log-probabilities."""
    if target.dtype.name not in ("int64", "uint8"):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {target.dtype.scalar_name}")
    if input.ndim > 1 and input.size(0) != target.size(0):
        raise ValueError(f"Expected input batch_size ({input.size(0)}) to match target batch_size "
                         f"({target.size(0)}).")
    _check_reduction(reduction)
    if input.ndim <= 2 and target.ndim > 1:  # e.g. labels of shape (N, 1): squeeze them to (N,)
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    check_device("nll_loss_forward", ("self", input), ("target", target), ("weight", weight))
    w = None if weight is None else weight._array
    loss = fn.NllLoss2d if input.ndim > 2 else fn.NllLoss
    return loss.apply(input, target._array.astype(np.int64, copy=False), w, reduction, ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """``nll_loss(log_softmax(input, 1), target)``: two nodes, NllLossBackward0 then LogSoftmaxBackward0.

    ``label_smoothing`` mixes the target with the uniform distribution over classes; a float ``target``
    of ``input``'s shape holds class probabilities. Both are written as PyTorch writes them (aten's
    LossNLL.cpp), in ops that record their own nodes.
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 1 if input.ndim > 1 else 0
    if target.shape == input.shape:  # (PyTorch reads these as class probabilities)
        return _cross_entropy_prob_target(input, target, weight, ignore_index, reduction, label_smoothing, class_dim)
    log_probs = log_softmax(input, class_dim)
    nll = nll_loss(log_probs, target, weight, ignore_index, reduction)
    if label_smoothing == 0.0:
        return nll
    return (1 - label_smoothing) * nll + _smooth_loss(log_probs, target, weight, ignore_index, reduction,
                                                      class_dim) * (label_smoothing / input.shape[class_dim])


def _class_weight(weight, ndim, class_dim):
    """``weight`` shaped to broadcast along the class dimension."""
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(shape)


def _smooth_loss(log_probs, target, weight, ignore_index, reduction, class_dim):
    """The loss against the uniform distribution, reduced as nll_loss reduces (normalised by the
    weights of the targets not ignored)."""
    if weight is not None:
        log_probs = log_probs * _class_weight(weight, log_probs.ndim, class_dim)
    ignored = target == ignore_index
    loss = (-log_probs.sum(class_dim)).masked_fill(ignored, 0.0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    kept = target[~ignored]
    return loss.sum() / (weight[kept].sum() if weight is not None else (~ignored).sum())


def _cross_entropy_prob_target(input, target, weight, ignore_index, reduction, label_smoothing, class_dim):
    """The cross-entropy against class probabilities: ``-(target * log_softmax(input)).sum(class_dim)``."""
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{target.dtype.scalar_name}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    _check_reduction(reduction)
    n_classes = input.shape[class_dim]
    log_probs = log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        target = target * (1 - label_smoothing) + (label_smoothing / n_classes)
    terms = log_probs * target
    if weight is not None:
        terms = terms * _class_weight(weight, input.ndim, class_dim)
    if reduction == "none":
        return -terms.sum(class_dim)
    if reduction == "sum":
        return -terms.sum()
    return DivScalar.apply(-terms.sum(), input.numel() // n_classes)


def legacy_reduction(size_average, reduce):
    """The ``reduction`` that PyTorch's old ``size_average``/``reduce`` flags mean, with its deprecation warning."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
                  stacklevel=3)
    return reduction


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """The loss of probabilities ``input`` (after a sigmoid) against 0/1 ``target``: node BinaryCrossEntropyBackward0.

    Prefer ``binary_cross_entropy_with_logits`` on the raw scores: a sigmoid
    that rounds to exactly 0 or 1 loses the gradient here.
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if weight is not None:
        _check_expandable(weight.shape, target.shape)
        weight = weight.expand(*target.shape) if weight.ndim <= target.ndim else weight
        check_broadcast_into(target.shape, weight.shape)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"binary_cross_entropy\" not implemented for '{input.dtype.scalar_name}'")
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {target.dtype.scalar_name} but expected {input.dtype.scalar_name}")
    _check_no_grad("binary_cross_entropy", weight=weight)
    check_device("binary_cross_entropy", ("self", input), ("target", target), ("weight", weight))
    x = input._array
    if x.size and not ((x >= 0) & (x <= 1)).all():  # (nan fails both comparisons, as in PyTorch)
        raise RuntimeError("all elements of input should be between 0 and 1")
    t = target._array
    if t.size and not ((t >= 0) & (t <= 1)).all():
        raise RuntimeError("all elements of target should be between 0 and 1")
    return fn.BinaryCrossEntropy.apply(input, target, _array_or_none(weight), reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """BCE of ``sigmoid(input)``, computed from the logits without rounding the probability.

    ``pos_weight`` (one value per class, broadcast along the last dim) multiplies
    the loss of positive targets; ``weight`` multiplies every element's loss.
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"log_sigmoid_cpu\" not implemented for '{input.dtype.scalar_name}'")
    if pos_weight is not None:
        check_broadcast(pos_weight.shape, target.shape)
    if not target.dtype.is_floating_point:  # PyTorch computes (1 - target) in place, in target's dtype
        raise RuntimeError(f"result type Float can't be cast to the desired output type {target.dtype.scalar_name}")
    if weight is not None:
        check_broadcast(input.shape, weight.shape)
        check_broadcast_into(input.shape, weight.shape)
    _check_no_grad("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    check_device("binary_cross_entropy_with_logits", ("self", input), ("target", target), ("weight", weight),
                 ("pos_weight", pos_weight))
    return fn.BinaryCrossEntropyWithLogits.apply(input, target, _array_or_none(weight), _array_or_none(pos_weight),
                                                 reduction)


def _array_or_none(t):
    return None if t is None else t._array


def _check_expandable(shape, target_shape):
    """PyTorch's error when ``weight.expand(target_shape)`` cannot work, read from the last dim back."""
    for k in range(1, min(len(shape), len(target_shape)) + 1):
        if shape[-k] != 1 and shape[-k] != target_shape[-k]:
            raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[-k]} at -{k}! Mismatching "
                               f"argument at index 1 had {shape}; but expected shape should be broadcastable to "
                               f"{list(target_shape)}")


def check_broadcast_into(out_shape, other_shape):
    """An in-place op (``loss.mul_(weight)``) cannot grow its output to the broadcast shape."""
    full = np.broadcast_shapes(tuple(out_shape), tuple(other_shape))
    if full != tuple(out_shape):
        raise RuntimeError(f"output with shape {list(out_shape)} doesn't match the broadcast shape {list(full)}")


def _check_no_grad(function_name, **tensors):
    """Loss weights are constants: PyTorch has no derivative for them and says so."""
    for name, t in tensors.items():
        if t is not None and t.requires_grad:
            raise RuntimeError(f"The function '{function_name}' is not differentiable with respect to argument "
                               f"'{name}'. This input cannot have requires_grad True.")


def one_hot(tensor, num_classes=-1):
    """Class indices as rows of zeros with a 1 at the index: int64, one more dim of size ``num_classes``.

    ``num_classes=-1`` takes the largest index + 1. The result is data, not part
    of any graph (call ``.float()`` to use it in a loss).
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"one_hot(): argument 'input' (position 1) must be Tensor, not {type(tensor).__name__}")
    if isinstance(num_classes, Tensor) and not num_classes.dtype.is_floating_point and num_classes.ndim == 0:
        num_classes = num_classes.item()
    if isinstance(num_classes, bool) or not isinstance(num_classes, int):
        raise TypeError(f"one_hot(): argument 'num_classes' (position 2) must be int, not "
                        f"{type(num_classes).__name__}")
    if tensor.dtype.name != "int64":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    indices = tensor._array
    if indices.size == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    elif indices.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    elif num_classes == -1:
        num_classes = int(indices.max()) + 1
    elif num_classes <= indices.max():
        raise RuntimeError("Class values must be smaller than num_classes.")
    xp = _device.array_module(indices)
    return wrap((indices[..., None] == xp.arange(num_classes)).astype(np.int64))



# ---- convolution and pooling (chibigrad/ops/conv.py) ------------------------------------
def _tuple(value, n):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


def _batched(input, spatial, name, weight=None):
    """(C, *spatial) or (N, C, *spatial): the batched input and whether a batch dim was added."""
    if weight is not None and weight.ndim != spatial + 2:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size "
                           f"{list(input.shape)} instead")
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to {name}, but got "
                           f"input of size: {list(input.shape)}")
    return (input.unsqueeze(0), True) if input.ndim == spatial + 1 else (input, False)


def _convolution(input, weight, bias, stride, padding, dilation, groups, spatial, name):
    x, added = _batched(input, spatial, name, weight)
    stride, dilation = _tuple(stride, spatial), _tuple(dilation, spatial)
    if padding == "same":
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        if any(d * (k - 1) % 2 for d, k in zip(dilation, weight.shape[2:])):
            raise NotImplementedError("chibigrad's padding='same' needs an odd effective kernel size (PyTorch pads "
                                      "even ones more on one side): use an odd kernel or explicit padding")
        padding = tuple(d * (k - 1) // 2 for d, k in zip(dilation, weight.shape[2:]))
    padding = (0,) * spatial if padding == "valid" else _tuple(padding, spatial)
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(x.shape)} to have {weight.shape[1] * groups} channels, but got {x.shape[1]} "
                           "channels instead")
    padded = [n + 2 * q for n, q in zip(x.shape[2:], padding)]
    span = [(k - 1) * d + 1 for k, d in zip(weight.shape[2:], dilation)]
    if any(p < k for p, k in zip(padded, span)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(map(str, span))}). Kernel size can't be greater than actual input size")
    out = conv.Convolution.apply(x, weight, bias, stride, padding, dilation, groups)
    return out.squeeze(0) if added else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convolution(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convolution(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def _pool_geometry(input, kernel_size, stride, padding, dilation, spatial):
    kernel = _tuple(kernel_size, spatial)
    stride = kernel if stride is None or stride == [] else _tuple(stride, spatial)
    padding, dilation = _tuple(padding, spatial), _tuple(dilation, spatial)
    for q, k, d in zip(padding, kernel, dilation):
        if q > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={q}, "
                               f"kernel_size={k} and dilation={d}")
    out = [(n + 2 * q - (k - 1) * d - 1) // s + 1
           for n, q, k, d, s in zip(input.shape[-spatial:], padding, kernel, dilation, stride)]
    if min(out) < 1:
        given = "x".join(map(str, input.shape[-spatial - 1:]))
        raise RuntimeError(f"Given input size: ({given}). Calculated output size: "
                           f"({'x'.join(map(str, [input.shape[-spatial - 1]] + out))}). Output size is too small")
    return kernel, stride, padding, dilation


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if ceil_mode:
        raise NotImplementedError("chibigrad's max_pool2d has no ceil_mode=True")
    x, added = _batched(input, 2, "max_pool2d")
    kernel, stride, padding, dilation = _pool_geometry(x, kernel_size, stride, padding, dilation, 2)
    out, indices = conv.MaxPool.apply(x, kernel, stride, padding, dilation)
    if added:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return (out, indices) if return_indices else out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if ceil_mode or not count_include_pad or divisor_override is not None:
        raise NotImplementedError("chibigrad's avg_pool2d has only ceil_mode=False, count_include_pad=True and no "
                                  "divisor_override")
    x, added = _batched(input, 2, "avg_pool2d")
    kernel, stride, padding, _ = _pool_geometry(x, kernel_size, stride, padding, 1, 2)
    out = conv.AvgPool.apply(x, kernel, stride, padding)
    return out.squeeze(0) if added else out


def adaptive_avg_pool2d(input, output_size):
    """Average over (H, W) into ``output_size`` cells; 1 x 1 is the mean over the plane, as PyTorch
    computes it (MeanBackward1)."""
    size = _tuple(output_size, 2)
    size = tuple(n if s is None else s for s, n in zip(size, input.shape[-2:]))
    if size == (1, 1):
        return input.mean((-2, -1), keepdim=True)
    return conv.AdaptiveAvgPool.apply(input, size)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels (each (H, W) plane) with probability ``p``: neighbouring pixels are
    correlated, so dropping single elements would hardly regularise a convolution."""
    return _dropout(input, p, training, inplace, input.shape[:-2] + (1, 1))


from .. import _missing  # noqa: E402

__getattr__ = _missing.module_getattr(__name__, "torch.nn.functional")
