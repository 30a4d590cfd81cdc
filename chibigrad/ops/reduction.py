"""Reductions and the softmax family.

A reduction's backward broadcasts the incoming gradient back over the
reduced dimensions: ``unsqueeze_dims`` restores them as size-1 axes first.
"""
import builtins
import collections
import warnings

import numpy as np

from .. import _device, return_types as _return_types
from ..autograd import grad_mode
from ..autograd.function import Function
from ..tensor import Tensor, numpy_names, wrap
from .pointwise import maximum, minimum, where
from ._util import float_array, normalize_dims, register, unsqueeze_dims, warn, wrap_dim

values_indices = collections.namedtuple("return_types", ["values", "indices"])


class Sum(Function):
    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False, dtype=None):
        ctx.dims, ctx.keepdim, ctx.in_shape = normalize_dims(dim, a.ndim), keepdim, a.shape
        x = a._array if a.dtype.is_floating_point or dtype else a._array.astype(np.int64)
        return wrap(x.sum(axis=ctx.dims, keepdims=keepdim, dtype=dtype and dtype.np_type))

    @staticmethod
    def backward(ctx, grad):
        return unsqueeze_dims(grad, ctx.dims, ctx.keepdim).expand(ctx.in_shape), None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


class SumAll(Sum):
    node_name = "SumBackward0"


class SumDim(Sum):
    node_name = "SumBackward1"


@register("sum")
@numpy_names
def sum(a, dim=None, keepdim=False, dtype=None):  # noqa: A001
    return (SumAll if dim is None else SumDim).apply(a, dim, keepdim, dtype)


@register("sum_to_size", torch=False)
def sum_to_size(a, *shape):
    """Sum over broadcast dimensions so the result has ``shape``: how a
    gradient flows back to an input that was broadcast."""
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    if a.shape == shape:
        return a
    if not shape:
        return a.sum()
    lead = a.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and a.shape[lead + i] != 1)
    summed = a.sum(dims, keepdim=True) if dims else a
    return summed.view(shape) if lead else summed  # as PyTorch's at::sum_to: a view only to drop leading dims


class Mean(Function):
    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False):
        ctx.dims, ctx.keepdim, ctx.in_shape = normalize_dims(dim, a.ndim), keepdim, a.shape
        ctx.count = int(np.prod([a.shape[d] for d in ctx.dims]))
        return wrap(a._array.mean(axis=ctx.dims, keepdims=keepdim).astype(a._array.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        return unsqueeze_dims(grad, ctx.dims, ctx.keepdim).expand(ctx.in_shape) / ctx.count, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


class MeanAll(Mean):
    node_name = "MeanBackward0"


class MeanDim(Mean):
    node_name = "MeanBackward1"


@register("mean")
@numpy_names
def mean(a, dim=None, keepdim=False):
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {a.dtype.scalar_name}")
    return (MeanAll if dim is None else MeanDim).apply(a, dim, keepdim)


class Amax(Function):
    """max/min over dims; ties share the gradient evenly, as PyTorch's amax."""
    node_name = "AmaxBackward0"
    saved_names = ("self", "result")
    reduce = staticmethod(np.amax)

    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False):
        ctx.dims, ctx.keepdim = normalize_dims(dim, a.ndim), keepdim
        out = wrap(ctx._forward_cls.reduce(a._array, axis=ctx.dims, keepdims=keepdim))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        hit = a == unsqueeze_dims(out, ctx.dims, ctx.keepdim)
        count = hit.sum(dim=ctx.dims, keepdim=True)
        return grad_where(hit, unsqueeze_dims(grad, ctx.dims, ctx.keepdim) / count), None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        hit = ctx.primals[0] == unsqueeze_dims(ctx.result, ctx.dims, ctx.keepdim)  # ties share, as in backward
        return (ta * hit).sum(dim=ctx.dims, keepdim=ctx.keepdim) / hit.sum(dim=ctx.dims, keepdim=ctx.keepdim)


class Amin(Amax):
    node_name = "AminBackward0"
    reduce = staticmethod(np.amin)


class MaxAll(Amax):
    node_name = "MaxBackward1"


class MinAll(Amin):
    node_name = "MinBackward1"


@register("amax")
@numpy_names
def amax(a, dim=(), keepdim=False):
    return Amax.apply(a, dim if dim != () else None, keepdim)


@register("amin")
@numpy_names
def amin(a, dim=(), keepdim=False):
    return Amin.apply(a, dim if dim != () else None, keepdim)


def grad_where(mask, grad):
    """``grad`` where ``mask`` holds, zero elsewhere (broadcasting ``grad``)."""
    return grad * mask


class MaxDim(Function):
    """``max(dim)``: values and indices; the gradient goes to the (first) argmax."""
    node_name = "MaxBackward0"
    arg = staticmethod(np.argmax)

    @staticmethod
    def forward(ctx, a, dim, keepdim=False):
        d = wrap_dim(dim, a.ndim)
        if not a.ndim:  # a 0-d tensor is its own max, at index 0
            ctx.dim = None
            indices = wrap(np.zeros_like(a._array, dtype=np.int64))
            ctx.mark_non_differentiable(indices)
            return wrap(a._array.copy()), indices
        idx = np.expand_dims(ctx._forward_cls.arg(a._array, axis=d), d)
        values = np.take_along_axis(a._array, idx, axis=d)
        if not keepdim:
            values, idx = values.squeeze(d), idx.squeeze(d)
        ctx.dim, ctx.keepdim, ctx.in_shape, ctx.index = d, keepdim, a.shape, idx
        indices = wrap(idx.astype(np.int64))
        ctx.mark_non_differentiable(indices)
        return wrap(values), indices

    @staticmethod
    def backward(ctx, grad, _grad_indices):
        from .shape import IndexAlongDim
        if ctx.dim is None:
            return grad, None, None
        return IndexAlongDim.scatter(grad, ctx.index, ctx.dim, ctx.keepdim, ctx.in_shape), None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        if ctx.dim is None:
            return ta.clone(), None
        index = wrap(ctx.index if ctx.keepdim else np.expand_dims(ctx.index, ctx.dim))
        picked = ta.gather(ctx.dim, index)
        return (picked if ctx.keepdim else picked.squeeze(ctx.dim)), None


class MinDim(MaxDim):
    node_name = "MinBackward0"
    arg = staticmethod(np.argmin)


@register("max")
@numpy_names
def max(a, dim=None, keepdim=False):  # noqa: A001
    if isinstance(dim, Tensor):
        return maximum(a, dim)
    return MaxAll.apply(a) if dim is None else _return_types.max(*MaxDim.apply(a, dim, keepdim))


@register("min")
@numpy_names
def min(a, dim=None, keepdim=False):  # noqa: A001
    if isinstance(dim, Tensor):
        return minimum(a, dim)
    return MinAll.apply(a) if dim is None else _return_types.min(*MinDim.apply(a, dim, keepdim))


@register("argmax")
@numpy_names
def argmax(a, dim=None, keepdim=False):
    return _arg(np.argmax, a, dim, keepdim)


@register("argmin")
@numpy_names
def argmin(a, dim=None, keepdim=False):
    return _arg(np.argmin, a, dim, keepdim)


def _arg(fn, a, dim, keepdim):
    return ArgReduce.apply(a, fn, dim, keepdim)


class ArgReduce(Function):
    """argmax and argmin (numpy's ``fn``): int64 indices, never differentiable. A Function so that vmap
    meets them as every op (chibigrad/batching_rules.py)."""

    @staticmethod
    def forward(ctx, a, fn, dim, keepdim):
        if dim is None:
            return wrap(fn(a._array).astype(np.int64))
        dim = wrap_dim(dim, a.ndim)
        if not a.ndim:  # a 0-d tensor's only element
            return wrap(np.zeros_like(a._array, dtype=np.int64))
        return wrap(fn(a._array, axis=dim, keepdims=keepdim).astype(np.int64))

    @staticmethod
    def jvp(ctx, *tangents):
        return None


class Prod(Function):
    """d/dx_i prod(x) = prod(x) / x_i, computed without dividing (zeros allowed)."""

    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False):
        ctx.dims, ctx.keepdim = normalize_dims(dim, a.ndim), keepdim
        ctx.save_for_backward(a)
        return wrap(a._array.prod(axis=ctx.dims, keepdims=keepdim))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        others = _prod_of_others(a, ctx.dims)
        return unsqueeze_dims(grad, ctx.dims, ctx.keepdim) * others, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        others = _prod_of_others(ctx.primals[0], ctx.dims)
        return (ta * others).sum(dim=ctx.dims, keepdim=ctx.keepdim)


class ProdAll(Prod):
    node_name = "ProdBackward0"


class ProdDim(Prod):
    node_name = "ProdBackward1"


@register("prod")
@numpy_names
def prod(a, dim=None, keepdim=False):
    return (ProdAll if dim is None else ProdDim).apply(a, dim, keepdim)


def _prod_of_others(a, dims):
    """For each element, the product of the other elements reduced with it.

    Without zeros this is prod / x (differentiable, so double backward works);
    with zeros, for create_graph a differentiable product of each element's
    others, else, faster, products from the left and right on the arrays.
    """
    x = a._array
    if (x != 0).all():
        return a.prod(dim=dims, keepdim=True) / a
    if grad_mode.is_grad_enabled():
        return _prod_of_others_differentiable(a, dims)
    moved = np.moveaxis(x, dims, range(-len(dims), 0))
    flat = moved.reshape(moved.shape[:moved.ndim - len(dims)] + (-1,))
    ones = np.ones_like(x, shape=flat.shape[:-1] + (1,))
    left = np.cumprod(np.concatenate([ones, flat[..., :-1]], -1), -1)
    right = np.cumprod(np.concatenate([flat[..., 1:], ones], -1)[..., ::-1], -1)[..., ::-1]
    others = (left * right).reshape(moved.shape)
    return wrap(np.moveaxis(others, range(-len(dims), 0), dims))


def _prod_of_others_differentiable(a, dims):
    """Row i of an n x n matrix holds the n elements reduced together, the i-th replaced by 1;
    the row's product is the i-th answer. Exact to any order, at n times the memory of ``a``."""
    kept = [d for d in range(a.ndim) if d not in dims]
    moved = a.permute(*kept, *dims)
    flat = moved.reshape(*moved.shape[:len(kept)], -1)
    n = flat.shape[-1]
    rows = where(wrap(_device.array_module(a._array).eye(n, dtype=bool)), 1.0, flat.unsqueeze(-2))
    return rows.prod(-1).reshape(moved.shape).permute(*np.argsort(kept + list(dims)).tolist())


def _spread(ctx, fn, a, dim, correction, keepdim):
    """np.var or np.std over ``dim``; remembers on ctx what both backwards need."""
    ctx.dims, ctx.keepdim = normalize_dims(dim, a.ndim), keepdim
    denom = int(np.prod([a.shape[d] for d in ctx.dims])) - correction
    ctx.denom = builtins.max(denom, 0)  # (this module's max is torch.max)
    if ctx.denom == 0:  # the result is nan, as in PyTorch, which says why
        warn(f"{fn.__name__}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
             "factor (input numel divided by output numel). (Triggered internally at "
             "/__w/pytorch/pytorch/aten/src/ATen/native/ReduceOps.cpp:1861.)")
    with warnings.catch_warnings():  # not numpy's RuntimeWarning as well
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(a._array, axis=ctx.dims, ddof=correction, keepdims=keepdim).astype(a._array.dtype, copy=False)


class Var(Function):
    """Variance with ``correction`` (1: unbiased, as torch.var's default)."""
    node_name = "VarBackward0"

    @staticmethod
    def forward(ctx, a, dim=None, correction=1, keepdim=False):
        ctx.save_for_backward(a)
        return wrap(_spread(ctx, np.var, a, dim, correction, keepdim))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        centered = a - a.mean(dim=ctx.dims, keepdim=True)
        scale = 2.0 / ctx.denom if ctx.denom else float("nan")  # no degrees of freedom: nan, as the value
        return unsqueeze_dims(grad, ctx.dims, ctx.keepdim) * centered * scale, None, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        a = ctx.primals[0]
        centered = a - a.mean(dim=ctx.dims, keepdim=True)
        scale = 2.0 / ctx.denom if ctx.denom else float("nan")
        return (centered * ta).sum(dim=ctx.dims, keepdim=ctx.keepdim) * scale


def _check_spread_dtype(a):
    if not a.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")


@register("var")
@numpy_names
def var(a, dim=None, unbiased=True, keepdim=False, *, correction=None):
    _check_spread_dtype(a)
    return Var.apply(a, dim, _correction(unbiased, correction), keepdim)


def _correction(unbiased, correction):
    """torch's ``correction`` wins over the older ``unbiased`` flag."""
    return (1 if unbiased else 0) if correction is None else correction


class Std(Function):
    """Standard deviation; d std = (x - mean) / (denom * std)."""
    node_name = "StdBackward0"

    @staticmethod
    def forward(ctx, a, dim=None, correction=1, keepdim=False):
        out = wrap(_spread(ctx, np.std, a, dim, correction, keepdim))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        centered = a - a.mean(dim=ctx.dims, keepdim=True)
        g = unsqueeze_dims(grad / out, ctx.dims, ctx.keepdim)
        return g * centered / ctx.denom, None, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        a = ctx.primals[0]
        centered = a - a.mean(dim=ctx.dims, keepdim=True)
        return (centered * ta).sum(dim=ctx.dims, keepdim=ctx.keepdim) / (ctx.result * ctx.denom)


@register("std")
@numpy_names
def std(a, dim=None, unbiased=True, keepdim=False, *, correction=None):
    _check_spread_dtype(a)
    return Std.apply(a, dim, _correction(unbiased, correction), keepdim)


class Norm(Function):
    """The p-norm; for p=2 the gradient is x / ||x||."""
    node_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, a, p=2, dim=None, keepdim=False):
        ctx.dims, ctx.keepdim, ctx.p = normalize_dims(dim, a.ndim), keepdim, p
        x = a._array
        if p == 2:
            out = np.sqrt((x * x).sum(axis=ctx.dims, keepdims=keepdim))
        elif p == float("inf"):
            out = np.abs(x).max(axis=ctx.dims, keepdims=keepdim)
        else:
            out = (np.abs(x) ** p).sum(axis=ctx.dims, keepdims=keepdim) ** (1.0 / p)
        out = wrap(out.astype(x.dtype, copy=False))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        g = unsqueeze_dims(grad, ctx.dims, ctx.keepdim)
        n = unsqueeze_dims(out, ctx.dims, ctx.keepdim)
        p = ctx.p
        if p == float("inf"):
            hit = a.abs() == n
            return g * a.sign() * hit / hit.sum(dim=ctx.dims, keepdim=True), None, None, None
        safe = where_nonzero(n)
        return g * a * a.abs() ** (p - 2) / safe ** (p - 1), None, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        a, p = ctx.primals[0], ctx.p
        n = unsqueeze_dims(ctx.result, ctx.dims, ctx.keepdim)
        if p == float("inf"):
            hit = a.abs() == n
            slope = a.sign() * hit / hit.sum(dim=ctx.dims, keepdim=True)
        else:
            slope = a * a.abs() ** (p - 2) / where_nonzero(n) ** (p - 1)  # the gradient backward computes
        return (slope * ta).sum(dim=ctx.dims, keepdim=ctx.keepdim)


class NormScalarDim(Norm):
    """aten's ``norm(p, dim)``, the one C++ formulas call (``pairwise_distance``): the same p-norm,
    PyTorch's other node name."""
    node_name = "NormBackward1"


def where_nonzero(n):
    """``n`` with zeros replaced by ones, so 0/0 gradients come out as 0 (PyTorch's choice at 0)."""
    return n + (n == 0)


@register("norm")
@numpy_names
def norm(a, p="fro", dim=None, keepdim=False):
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{a.dtype.scalar_name}")
    return Norm.apply(a, 2 if p in ("fro", 2) else p, dim, keepdim)


class Softmax(Function):
    node_name = "SoftmaxBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, a, dim):
        dim = normalize_dims(dim, a.ndim)
        x = float_array(a)
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        out = wrap(e / e.sum(axis=dim, keepdims=True))
        ctx.dim = dim
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return out * (grad - (grad * out).sum(dim=ctx.dim, keepdim=True)), None

    @staticmethod
    def jvp(ctx, ta, _):
        out = ctx.result
        return out * (ta - (ta * out).sum(dim=ctx.dim, keepdim=True))


class LogSoftmax(Function):
    node_name = "LogSoftmaxBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, a, dim):
        dim = normalize_dims(dim, a.ndim)
        x = float_array(a)
        shifted = x - x.max(axis=dim, keepdims=True)  # so that exp cannot overflow
        shifted -= np.log(np.exp(shifted).sum(axis=dim, keepdims=True))  # in place: no second array of x's size
        out = wrap(shifted)
        ctx.dim = dim
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad - out.exp() * grad.sum(ctx.dim, keepdim=True), None

    @staticmethod
    def jvp(ctx, ta, _):
        return ta - (ctx.result.exp() * ta).sum(dim=ctx.dim, keepdim=True)


@register("softmax")
@numpy_names
def softmax(a, dim):
    _check_softmax_dtype("softmax", a, dim)
    return Softmax.apply(a, dim)


@register("log_softmax")
@numpy_names
def log_softmax(a, dim):
    _check_softmax_dtype("log_softmax", a, dim)
    return LogSoftmax.apply(a, dim)


def _check_softmax_dtype(name, a, dim):
    """PyTorch has no integer softmax kernel; its error names the kernel (one for the last dim)."""
    if a._array.dtype.kind != "f":
        axis = wrap_dim(dim, a.ndim)
        last = "lastdim_" if axis == a.ndim - 1 or not a.ndim else ""
        raise NotImplementedError(f'"{name}_{last}kernel_impl" not implemented for \'{a.dtype.scalar_name}\'')


class LogSumExp(Function):
    node_name = "LogsumexpBackward0"

    @staticmethod
    def forward(ctx, a, dim, keepdim=False):
        x = float_array(a)
        ctx.dims, ctx.keepdim = normalize_dims(dim, a.ndim), keepdim
        m = x.max(axis=ctx.dims, keepdims=True)
        m = np.where(np.isfinite(m), m, 0)
        out = np.log(np.exp(x - m).sum(axis=ctx.dims, keepdims=True)) + m
        out = wrap(out if keepdim else out.squeeze(ctx.dims))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        weights = (a - unsqueeze_dims(out, ctx.dims, ctx.keepdim)).exp()
        return unsqueeze_dims(grad, ctx.dims, ctx.keepdim) * weights, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        weights = (ctx.primals[0] - unsqueeze_dims(ctx.result, ctx.dims, ctx.keepdim)).exp()
        return (ta * weights).sum(dim=ctx.dims, keepdim=ctx.keepdim)


@register("logsumexp")
@numpy_names
def logsumexp(a, dim, keepdim=False):
    return LogSumExp.apply(a, dim, keepdim)


# ---- logical reductions: bool results, never differentiable ----

class LogicalReduce(Function):
    """all and any (numpy's ``fn``) over ``dim`` (None: every dim): bool results, a Function as ArgReduce."""

    @staticmethod
    def forward(ctx, a, fn, dim):
        return wrap(fn(a._array, axis=None if dim is None else wrap_dim(dim, a.ndim)))

    @staticmethod
    def jvp(ctx, *tangents):
        return None


@register("all")
@numpy_names
def all(a, dim=None):  # noqa: A001
    return LogicalReduce.apply(a, np.all, dim)


@register("any")
@numpy_names
def any(a, dim=None):  # noqa: A001
    return LogicalReduce.apply(a, np.any, dim)
