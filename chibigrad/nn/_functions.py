"""The autograd Functions behind nn.functional.

Each is a Function like the ops in ``chibigrad/ops``: forward computes on
numpy arrays, backward is written with Tensor operations so that it can be
differentiated again (``create_graph=True``). They are fused -- one graph
node each, named as PyTorch names it (``NllLossBackward0``,
``NativeLayerNormBackward0``, ...) -- because the composed version would
record a dozen nodes and be slower.
"""
import math

import numpy as np

from .. import _device
from ..autograd.function import Function
from ..ops._util import arrays
from ..ops.pointwise import Erf, erf_array as erf, where  # noqa: F401 - Erf: the batching rules' list
from ..ops.shape import IndexGrad
from ..tensor import wrap

# ---- GELU, SiLU (erf is an op: chibigrad/ops/pointwise.py) ------------------------------
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


class Gelu(Function):
    """x * Phi(x), Phi the standard normal CDF; 'tanh' is the usual approximation of Phi."""
    node_name = "GeluBackward0"

    @staticmethod
    def forward(ctx, a, approximate="none"):
        ctx.save_for_backward(a)
        ctx.approximate = approximate
        x = a._array
        if approximate == "tanh":
            return wrap(0.5 * x * (1 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x ** 3))))
        return wrap(0.5 * x * (1 + erf(x * math.sqrt(0.5))))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if ctx.approximate == "tanh":
            t = (_SQRT_2_OVER_PI * (x + 0.044715 * x ** 3)).tanh()
            dinner = _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)
            return grad * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * dinner), None
        cdf = 0.5 * (1 + Erf.apply(x * math.sqrt(0.5)))
        pdf = (-0.5 * x * x).exp() * (1 / math.sqrt(2 * math.pi))
        return grad * (cdf + x * pdf), None

    @staticmethod
    def jvp(ctx, ta, _):
        x = ctx.primals[0]
        if ctx.approximate == "tanh":
            t = (_SQRT_2_OVER_PI * (x + 0.044715 * x ** 3)).tanh()
            dinner = _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)
            return ta * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * dinner)
        cdf = 0.5 * (1 + Erf.apply(x * math.sqrt(0.5)))
        pdf = (-0.5 * x * x).exp() * (1 / math.sqrt(2 * math.pi))
        return ta * (cdf + x * pdf)


def sigmoid_array(x):
    """1 / (1 + exp(-x)) without overflow: exp only ever sees -|x|."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


class Silu(Function):
    """x * sigmoid(x); d/dx = s * (1 + x * (1 - s))."""
    node_name = "SiluBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return wrap(a._array * sigmoid_array(a._array))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        s = x.sigmoid()
        return grad * (s * (1 + x * (1 - s)))

    @staticmethod
    def jvp(ctx, ta):
        x = ctx.primals[0]
        s = x.sigmoid()
        return ta * (s * (1 + x * (1 - s)))


class Softplus(Function):
    """log(1 + exp(beta x)) / beta, or x itself where beta x > threshold (there the two agree to the
    dtype's precision, and exp would overflow); the slope is sigmoid(beta x), computed as PyTorch does."""
    node_name = "SoftplusBackward0"
    saved_names = ("self",)
    saved_values = ("beta", "threshold")

    @staticmethod
    def forward(ctx, a, beta, threshold):
        ctx.save_for_backward(a)
        ctx.beta, ctx.threshold = beta, threshold
        x = a._array
        return wrap(np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta).astype(x.dtype))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * _softplus_slope(x, ctx.beta, ctx.threshold), None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        return ta * _softplus_slope(ctx.primals[0], ctx.beta, ctx.threshold)


def _softplus_slope(x, beta, threshold):
    z = (x * beta).exp()
    return where(x * beta > threshold, 1.0, z / (z + 1))


class LogSigmoid(Function):
    """log(sigmoid(x)) = min(x, 0) - log(1 + exp(-|x|)): no overflow for large |x|."""
    node_name = "LogSigmoidBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        x = a._array
        return wrap(np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x))))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * _log_sigmoid_slope(x)

    @staticmethod
    def jvp(ctx, ta):
        return ta * _log_sigmoid_slope(ctx.primals[0])


def _log_sigmoid_slope(x):
    """1 - sigmoid(x), as PyTorch's kernel writes it: z / (1 + z) with z = exp(-|x|), from the nearer side."""
    z = (-x.abs()).exp()
    return where(x < 0, 1 - z / (1 + z), z / (1 + z))


class LeakyRelu(Function):
    """x where x > 0, else ``negative_slope * x``: a small gradient keeps flowing for negative inputs
    (at 0 the slope is negative_slope's, as in PyTorch)."""
    node_name = "LeakyReluBackward0"

    @staticmethod
    def forward(ctx, a, negative_slope):
        ctx.save_for_backward(a)
        ctx.negative_slope = negative_slope
        x = a._array
        return wrap(np.where(x > 0, x, x * negative_slope))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return where(x > 0, grad, grad * ctx.negative_slope), None

    @staticmethod
    def jvp(ctx, ta, _):
        return where(ctx.primals[0] > 0, ta, ta * ctx.negative_slope)


class LeakyReluInplace(LeakyRelu):
    """The in-place version saves its result (the input is overwritten); for a positive slope the
    result is positive exactly where the input was."""
    node_name = "LeakyReluBackward1"

    @staticmethod
    def forward(ctx, a, negative_slope):
        ctx.negative_slope = negative_slope
        x = a._array
        out = wrap(np.where(x > 0, x, x * negative_slope))
        ctx.save_for_backward(out)
        return out


# ---- losses -----------------------------------------------------------------
def reduce_array(losses, reduction):
    if reduction == "mean":
        return losses.mean()
    if reduction == "sum":
        return losses.sum()
    return losses


class MseLoss(Function):
    node_name = "MseLossBackward0"

    @staticmethod
    def forward(ctx, input, target, reduction):
        ctx.save_for_backward(input, target)
        ctx.reduction = reduction
        x, y = arrays(input, target)
        diff = x - y
        return wrap(reduce_array(diff * diff, reduction).astype(diff.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        diff = input - target
        g = grad * 2 * diff
        if ctx.reduction == "mean":
            g = g / diff.numel()
        return (g if ctx.needs_input_grad[0] else None,
                -g if ctx.needs_input_grad[1] else None, None)

    @staticmethod
    def jvp(ctx, t_input, t_target, _):
        input, target = ctx.primals[:2]
        losses = 2 * (input - target) * (t_input - t_target)
        return losses.mean() if ctx.reduction == "mean" else losses.sum() if ctx.reduction == "sum" else losses


class SmoothL1Loss(Function):
    """Quadratic for differences below ``beta``, linear above: ``0.5 z**2 / beta`` or ``z - 0.5 beta``.

    The gradient is the difference divided by beta, clamped to [-1, 1]: an outlier
    pulls with a bounded force, where MSE's pull grows with the error.
    """
    node_name = "SmoothL1LossBackward0"

    @staticmethod
    def forward(ctx, input, target, reduction, beta):
        ctx.save_for_backward(input, target)
        ctx.reduction, ctx.beta = reduction, beta
        x, y = arrays(input, target)
        z = np.abs(x - y)
        losses = np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)
        return wrap(reduce_array(losses, reduction).astype(z.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        return _robust_grads(ctx, lambda diff: grad * (diff / ctx.beta).clamp(-1, 1))

    @staticmethod
    def jvp(ctx, t_input, t_target, *_):
        input, target = ctx.primals[:2]
        losses = ((input - target) / ctx.beta).clamp(-1, 1) * (t_input - t_target)
        return losses.mean() if ctx.reduction == "mean" else losses.sum() if ctx.reduction == "sum" else losses


class HuberLoss(Function):
    """SmoothL1Loss times ``delta`` (PyTorch's ``delta`` is ``beta`` without the division):
    ``0.5 z**2`` below delta, ``delta * (z - 0.5 delta)`` above; the gradient is clamped to [-delta, delta]."""
    node_name = "HuberLossBackward0"

    @staticmethod
    def forward(ctx, input, target, reduction, delta):
        ctx.save_for_backward(input, target)
        ctx.reduction, ctx.delta = reduction, delta
        x, y = arrays(input, target)
        z = np.abs(x - y)
        losses = np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))
        return wrap(reduce_array(losses, reduction).astype(z.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        return _robust_grads(ctx, lambda diff: grad * diff.clamp(-ctx.delta, ctx.delta))

    @staticmethod
    def jvp(ctx, t_input, t_target, *_):
        input, target = ctx.primals[:2]
        losses = (input - target).clamp(-ctx.delta, ctx.delta) * (t_input - t_target)
        return losses.mean() if ctx.reduction == "mean" else losses.sum() if ctx.reduction == "sum" else losses


def _robust_grads(ctx, grad_of_diff):
    """The input and target gradients of a loss on ``input - target``. The target's is computed
    on ``target - input``, as PyTorch does, not negated: a zero difference then gives 0.0, not -0.0."""
    input, target = ctx.saved_tensors
    grads = []
    for needed, diff in zip(ctx.needs_input_grad[:2], (input - target, target - input)):
        g = grad_of_diff(diff) if needed else None
        grads.append(g / diff.numel() if needed and ctx.reduction == "mean" else g)
    return grads[0], grads[1], None, None


class NllLoss(Function):
    """The negative log-likelihood of the target class: ``-logp[i, target[i]]``.

    Forward picks one entry per sample; backward puts ``-weight / total``
    back at that entry and zeros elsewhere (a constant matrix, so the
    gradient is linear in ``grad`` and double backward is exact).
    ``ignore_index`` samples get weight 0. ``target`` and ``weight`` come
    as arrays: they get no gradient, so the node has no edges for them.
    """
    node_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, logp, target, weight, reduction, ignore_index):
        x, t = _samples_by_classes(logp._array, target)
        keep = t != ignore_index
        t = t * keep  # an ignored sample picks class 0, with weight 0
        _check_targets(t, keep, x.shape[1])
        w = keep.astype(x.dtype) if weight is None else weight[t] * keep
        rows = _device.array_module(x).arange(len(t))
        neg_w = -w
        losses = neg_w * x[rows, t]
        total = w.sum()
        # (+ 0.0 turns an ignored sample's -0. into 0.: PyTorch's gradient there is 0., printed without a sign)
        ctx.scale = (neg_w / total if reduction == "mean" else neg_w) + 0.0
        out = losses.sum() / total if reduction == "mean" else reduce_array(losses, reduction)
        ctx.logp_shape, ctx.rows, ctx.targets, ctx.reduction = logp._array.shape, rows, t, reduction
        if reduction == "none":
            out = out.reshape(target.shape)
        return wrap(out.astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        coeff = np.zeros_like(ctx.scale, shape=(len(ctx.rows), ctx.logp_shape[1 if len(ctx.logp_shape) > 1 else 0]))
        coeff[ctx.rows, ctx.targets] = ctx.scale
        if ctx.reduction == "none" and grad.ndim > 0:
            grad = grad.reshape(grad.shape[0], 1, *grad.shape[1:])
        coeff = _back_to_layout(coeff, ctx.logp_shape)
        return grad * wrap(coeff), None, None, None, None

    @staticmethod
    def jvp(ctx, t_logp, *_):
        return ctx._forward_cls.apply(t_logp, *ctx.primals[1:])  # a linear op: J v is the op applied to v


def _samples_by_classes(x, target):
    """``x`` as a (samples, classes) matrix and ``target`` as a vector, whatever the layout.

    Inputs may be (C,) for one sample, (N, C), or (N, C, d1, ...) with one
    class dimension per position: the class dim moves last, the rest flatten.
    """
    if x.ndim == 2:
        return x, target
    if x.ndim == 1:
        return x[None], target.reshape(1)
    return np.moveaxis(x, 1, -1).reshape(-1, x.shape[1]), target.reshape(-1)


def _back_to_layout(matrix, shape):
    """Undo ``_samples_by_classes`` for an array of the same size as the input."""
    if len(shape) <= 2:
        return matrix.reshape(shape)
    moved = (shape[0],) + tuple(shape[2:]) + (shape[1],)
    return np.moveaxis(matrix.reshape(moved), -1, 1)


class NllLoss2d(NllLoss):
    """The same loss over extra dims, ``(N, C, d1, ...)``: PyTorch names its node differently."""
    node_name = "NllLoss2DBackward0"


def _check_targets(targets, keep, num_classes):
    """PyTorch's error for the first class index outside [0, num_classes) that is not ignored.

    Read as unsigned, a negative index is huge: one ``max`` finds both kinds."""
    if targets.size and targets.view(np.uint64).max() >= num_classes:
        bad = targets[keep & ((targets < 0) | (targets >= num_classes))]
        raise IndexError(f"Target {bad[0]} is out of bounds.")


# ---- normalization ----------------------------------------------------------
def normalize_array(x, mean, var, eps, weight, bias, shape):
    """(x - mean) / sqrt(var + eps) * weight + bias, weight and bias reshaped to ``shape``."""
    out = (x - mean) / np.sqrt(var + eps)
    if weight is not None:
        out = out * weight._array.reshape(shape)
    if bias is not None:
        out = out + bias._array.reshape(shape)
    return out.astype(x.dtype, copy=False)


def normalize_backward(ctx, grad, x, weight):
    """Gradients of ``normalize_array`` when mean and var are x's own statistics over ``ctx.dims``.

    With xhat = (x - mean) * rstd and gx = grad * weight, the chain rule
    through the mean and the variance gives
    dx = rstd * (gx - mean(gx) - xhat * mean(gx * xhat)).
    The statistics are recomputed here with Tensor ops, so this gradient
    can itself be differentiated.
    """
    dims = ctx.dims
    centered = x - x.mean(dims, keepdim=True)
    rstd = ((centered * centered).mean(dims, keepdim=True) + ctx.eps) ** -0.5
    xhat = centered * rstd
    gx = grad if weight is None else grad * weight.reshape(ctx.param_shape)
    dx = rstd * (gx - gx.mean(dims, keepdim=True) - xhat * (gx * xhat).mean(dims, keepdim=True))
    need_x, need_w, need_b = ctx.needs_input_grad[:3]
    dw = (grad * xhat).sum(ctx.param_sum_dims) if need_w else None
    db = grad.sum(ctx.param_sum_dims) if need_b else None
    return dx if need_x else None, dw, db


class NativeLayerNorm(Function):
    """Normalise each sample over its last ``len(normalized_shape)`` dims."""
    node_name = "NativeLayerNormBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, normalized_ndim, eps):
        a = x._array
        ctx.dims = tuple(range(a.ndim - normalized_ndim, a.ndim))
        ctx.param_sum_dims = tuple(range(a.ndim - normalized_ndim))
        ctx.param_shape, ctx.eps = a.shape[a.ndim - normalized_ndim:], eps
        ctx.save_for_backward(x, weight)
        mean, var = a.mean(ctx.dims, keepdims=True), a.var(ctx.dims, keepdims=True)
        return wrap(normalize_array(a, mean, var, eps, weight, bias, ctx.param_shape))

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        return normalize_backward(ctx, grad, x, weight) + (None, None)

    @staticmethod
    def jvp(ctx, x_t, weight_t, bias_t, *_):
        """With xhat = (x - mean) * rstd over ``ctx.dims``: xhat_t = rstd * (x_t - mean(x_t) - xhat * mean(xhat * x_t)),
        the forward-mode twin of normalize_backward; then the affine part's product rule."""
        x, weight, bias = ctx.primals[:3]
        dims = ctx.dims
        centered = x - x.mean(dims, keepdim=True)
        rstd = ((centered * centered).mean(dims, keepdim=True) + ctx.eps) ** -0.5
        xhat = centered * rstd
        xhat_t = rstd * (x_t - x_t.mean(dims, keepdim=True) - xhat * (xhat * x_t).mean(dims, keepdim=True))
        out_t = xhat_t if weight is None else xhat_t * weight.reshape(ctx.param_shape)
        if weight is not None:
            out_t = out_t + xhat * weight_t.reshape(ctx.param_shape)
        return out_t if bias is None else out_t + bias_t.reshape(ctx.param_shape)


class NativeBatchNorm(Function):
    """Normalise each channel (dim 1) with the given mean and var.

    In training these are the batch's own statistics, so the gradient flows
    through them; in eval they are the running averages, constants.
    """
    node_name = "NativeBatchNormBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, mean, var, training, eps):
        a = x._array
        ctx.dims = ctx.param_sum_dims = (0,) + tuple(range(2, a.ndim))
        ctx.param_shape = (a.shape[1],) + (1,) * (a.ndim - 2)
        ctx.training, ctx.eps = training, eps
        ctx.save_for_backward(x, weight)
        shape = ctx.param_shape
        if not training:  # a snapshot: the running statistics change in place later
            ctx.mean, ctx.rstd = mean.reshape(shape).copy(), 1 / np.sqrt(var.reshape(shape) + eps)
        return wrap(normalize_array(a, mean.reshape(shape), var.reshape(shape), eps, weight, bias, shape))

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        if ctx.training:
            grads = normalize_backward(ctx, grad, x, weight)
        else:
            grads = _frozen_stats_backward(ctx, grad, x, weight)
        return grads + (None,) * 4

    @staticmethod
    def jvp(ctx, x_t, weight_t, bias_t, *_):
        if ctx.training:  # the batch's own statistics: layer norm's rule over dims (0, 2, ...)
            return NativeLayerNorm.jvp(ctx, x_t, weight_t, bias_t)
        x, weight, bias = ctx.primals[:3]
        rstd = wrap(ctx.rstd)
        out_t = x_t * rstd if weight is None else x_t * rstd * weight.reshape(ctx.param_shape)
        if weight is not None:
            out_t = out_t + (x - wrap(ctx.mean)) * rstd * weight_t.reshape(ctx.param_shape)
        return out_t if bias is None else out_t + bias_t.reshape(ctx.param_shape)


def _frozen_stats_backward(ctx, grad, x, weight):
    """With constant statistics the normalisation is affine: dx = grad * weight * rstd."""
    rstd = wrap(ctx.rstd)
    need_x, need_w, need_b = ctx.needs_input_grad[:3]
    scale = rstd if weight is None else weight.reshape(ctx.param_shape) * rstd
    xhat = (x - wrap(ctx.mean)) * rstd
    return (grad * scale if need_x else None,
            (grad * xhat).sum(ctx.param_sum_dims) if need_w else None,
            grad.sum(ctx.param_sum_dims) if need_b else None)


# ---- embedding ------------------------------------------------------------------
class Embedding(Function):
    """Row lookup ``weight[indices]``; backward adds each output row's gradient into its row."""
    node_name = "EmbeddingBackward0"

    @staticmethod
    def forward(ctx, weight, indices, padding_idx):
        ctx.indices, ctx.padding_idx, ctx.num_weights = indices, padding_idx, weight.shape
        return wrap(weight._array[indices])

    @staticmethod
    def backward(ctx, grad):
        if ctx.padding_idx is not None:
            grad = grad * wrap((ctx.indices != ctx.padding_idx)[..., None])
        return IndexGrad.apply(grad, ctx.indices, ctx.num_weights), None, None

    @staticmethod
    def jvp(ctx, t_weight, *_):
        return ctx._forward_cls.apply(t_weight, *ctx.primals[1:])  # a linear op: J v is the op applied to v


# ---- binary cross-entropy -----------------------------------------------------
_BCE_EPSILON = 1e-12  # PyTorch's floor for x * (1 - x) in the gradient


def _log_rounded(fn, x):
    """``fn`` (np.log or np.log1p) of a float32 array, rounded once from float64.

    PyTorch's CPU kernels call C's ``logf``/``log1pf``, which are (nearly)
    correctly rounded; numpy's float32 SIMD versions may be one bit off.
    """
    return fn(x.astype(np.float64)).astype(x.dtype)


class BinaryCrossEntropy(Function):
    """-weight * (t * log(x) + (1 - t) * log(1 - x)), each log floored at -100.

    The floor keeps the loss finite when a probability is exactly 0 or 1
    (log(0) = -inf): a confident wrong answer costs 100, not infinity.
    ``weight`` comes as an array: it gets no gradient, so the node has no edge for it.
    """
    node_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, input, target, weight, reduction):
        x, t = input._array, target._array
        ctx.save_for_backward(input, target)
        ctx.weight, ctx.reduction = weight, reduction
        # PyTorch's order: (t - 1) * max(log1p(-x), -100) - t * max(log(x), -100)
        losses = (t - 1) * np.maximum(_log_rounded(np.log1p, -x), -100) - t * np.maximum(_log_rounded(np.log, x), -100)
        if weight is not None:
            losses = losses * weight
        return wrap(reduce_array(losses, reduction).astype(x.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        grad_input = grad_target = None
        if ctx.needs_input_grad[0]:  # d/dx = (x - t) / (x (1 - x))
            grad_input = _bce_scaled(ctx, grad * (input - target) / ((1 - input) * input).clamp(min=_BCE_EPSILON),
                                     input)
        if ctx.needs_input_grad[1]:  # d/dt = log(1 - x) - log(x) = -logit(x)
            grad_target = _bce_scaled(ctx, -(input / (1 - input)).log() * grad, input)
        return grad_input, grad_target, None, None

    @staticmethod
    def jvp(ctx, t_input, t_target, *_):
        input, target = ctx.primals[:2]
        d_input = (input - target) / ((1 - input) * input).clamp(min=_BCE_EPSILON)  # as backward
        losses = d_input * t_input - (input / (1 - input)).log() * t_target
        if ctx.weight is not None:
            losses = losses * wrap(ctx.weight)
        return losses.mean() if ctx.reduction == "mean" else losses.sum() if ctx.reduction == "sum" else losses


def _bce_scaled(ctx, grad, input):
    """A loss gradient times the element weights, divided by the count for ``reduction='mean'``."""
    if ctx.weight is not None:
        grad = grad * wrap(ctx.weight)
    return grad / input.numel() if ctx.reduction == "mean" else grad


class BinaryCrossEntropyWithLogits(Function):
    """BCE on logits z, through log(sigmoid(z)) instead of log of a rounded probability:

        loss = (1 - t) * z - log_weight * logsigmoid(z),   log_weight = 1 + (pos_weight - 1) * t

    ``logsigmoid(z) = min(z, 0) - log1p(exp(-|z|))`` never overflows and stays
    accurate where sigmoid(z) rounds to 0 or 1. ``pos_weight`` scales the
    loss of the positive examples (t = 1), to balance rare positives.
    ``weight`` and ``pos_weight`` come as arrays (no gradient, no edges).
    """
    node_name = "BinaryCrossEntropyWithLogitsBackward0"

    @staticmethod
    def forward(ctx, input, target, weight, pos_weight, reduction):
        z, t = input._array, target._array
        ctx.save_for_backward(input, target)
        ctx.weight, ctx.pos_weight, ctx.reduction = weight, pos_weight, reduction
        exp_neg_abs = np.exp(-np.abs(z).astype(np.float64)).astype(z.dtype)
        log_sigmoid = np.minimum(z, 0) - _log_rounded(np.log1p, exp_neg_abs)
        if pos_weight is not None:
            log_sigmoid = log_sigmoid * ((pos_weight - 1) * t + 1)
        losses = (1 - t) * z - log_sigmoid
        if weight is not None:
            losses = losses * weight
        # PyTorch works in place on (1 - target): the loss has target's dtype
        return wrap(reduce_array(losses, reduction).astype(t.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        input, target = ctx.saved_tensors
        pos_weight = None if ctx.pos_weight is None else wrap(ctx.pos_weight)
        grad_input = grad_target = None
        if ctx.needs_input_grad[0]:  # d/dz = sigmoid(z) - t, or (1 + (pw - 1) t) sigmoid(z) - pw t
            if pos_weight is None:
                g = input.sigmoid() - target
            else:
                pt = pos_weight * target
                g = (pt + 1 - target) * input.sigmoid() - pt
            grad_input = _bce_scaled(ctx, g * grad, input)
        if ctx.needs_input_grad[1]:  # d/dt = -z, or logsigmoid(-z) - pw * logsigmoid(z)
            g = -input if pos_weight is None else _log_sigmoid(-input) - _log_sigmoid(input) * pos_weight
            grad_target = _bce_scaled(ctx, g * grad, input)
        return grad_input, grad_target, None, None, None

    @staticmethod
    def jvp(ctx, t_input, t_target, *_):
        input, target = ctx.primals[:2]
        if ctx.pos_weight is None:
            d_input, d_target = input.sigmoid() - target, -input
        else:
            pos_weight = wrap(ctx.pos_weight)
            d_input = (pos_weight * target + 1 - target) * input.sigmoid() - pos_weight * target
            d_target = _log_sigmoid(-input) - _log_sigmoid(input) * pos_weight
        losses = d_input * t_input + d_target * t_target
        if ctx.weight is not None:
            losses = losses * wrap(ctx.weight)
        return losses.mean() if ctx.reduction == "mean" else losses.sum() if ctx.reduction == "sum" else losses


def _log_sigmoid(z):
    """log(sigmoid(z)) with Tensor ops (for the rarely needed gradient with respect to the target)."""
    return z.clamp(max=0) - ((-z.abs()).exp() + 1).log()


class NativeGroupNorm(Function):
    """Normalise each sample's channels in ``group`` groups; weight and bias are per channel. The
    statistics are layer norm's on the input seen as (N, group, C / group, rest), so is the gradient."""
    node_name = "NativeGroupNormBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, group, eps):
        a = x._array
        n, c = a.shape[:2]
        ctx.grouped = (n, group, c // group, -1)
        ctx.dims, ctx.param_sum_dims, ctx.param_shape, ctx.eps = (2, 3), (0, 3), (group, c // group, 1), eps
        ctx.save_for_backward(x, weight)
        g = a.reshape(ctx.grouped)
        mean, var = g.mean(ctx.dims, keepdims=True), g.var(ctx.dims, keepdims=True)
        return wrap(normalize_array(g, mean, var, eps, weight, bias, ctx.param_shape).reshape(a.shape))

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        dx, dw, db = normalize_backward(ctx, grad.reshape(ctx.grouped), x.reshape(ctx.grouped), weight)
        c = x.shape[1]
        return (None if dx is None else dx.reshape(x.shape), None if dw is None else dw.reshape(c),
                None if db is None else db.reshape(c), None, None)

    @staticmethod
    def jvp(ctx, x_t, weight_t, bias_t, *_):
        """Layer norm's forward rule on the grouped view, then the per-channel affine part."""
        x, weight, bias = ctx.primals[:3]
        xg, tg, dims = x.reshape(ctx.grouped), x_t.reshape(ctx.grouped), ctx.dims
        centered = xg - xg.mean(dims, keepdim=True)
        rstd = ((centered * centered).mean(dims, keepdim=True) + ctx.eps) ** -0.5
        xhat = centered * rstd
        xhat_t = (rstd * (tg - tg.mean(dims, keepdim=True) - xhat * (xhat * tg).mean(dims, keepdim=True)))
        xhat, xhat_t = xhat.reshape(x.shape), xhat_t.reshape(x.shape)
        channel = (x.shape[1],) + (1,) * (x.ndim - 2)
        out_t = xhat_t if weight is None else xhat_t * weight.reshape(channel)
        if weight_t is not None:
            out_t = out_t + xhat * weight_t.reshape(channel)
        return out_t if bias_t is None else out_t + bias_t.reshape(channel)
