"""Ops that pick or place elements along a dim by index: gather, scatter, index_add, sort, topk.

They are each other's gradients: gathering elements sends the gradient back by scattering
(adding) it to the places they came from, and scattering sends it back by gathering. sort and
topk are a gather with indices they compute themselves.
"""
import numpy as np

from .. import _device, return_types as _return_types
from ..autograd.function import Function
from ..tensor import Tensor, wrap
from ._util import register, wrap_dim


def _grid(index, dim):
    """Index arrays that address ``index``'s own positions, with ``index`` itself along ``dim``:
    ``out[_grid(index, dim)]`` is element ``index[i, j, ...]`` along ``dim`` at position (i, j, ...)."""
    xp = _device.array_module(index)
    shape = index.shape
    grid = [xp.arange(n).reshape([n if i == d else 1 for i in range(index.ndim)]) for d, n in enumerate(shape)]
    grid[dim] = index
    return tuple(grid)


def check_index(name, a, dim, index):
    """PyTorch's checks of an index tensor; the ops then take its array (an index has no gradient)."""
    if index.dtype.name not in ("int32", "int64"):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if index.ndim != a.ndim and not (index.ndim <= 1 and a.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    size = a.shape[dim] if a.ndim else 1
    if index.numel() and (int(index._array.min()) < 0 or int(index._array.max()) >= size):
        bad = int(index._array.max()) if int(index._array.max()) >= size else int(index._array.min())
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


class Gather(Function):
    """``out[i][j] = a[i][index[i][j]]`` (dim 1): the gradient is added back where each element came from."""
    node_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, a, dim, index):
        ctx.dim, ctx.index, ctx.shape = dim, index, a.shape
        return wrap(a._array[_grid(index, dim)])

    @staticmethod
    def backward(ctx, grad):
        zeros = wrap(_device.zeros(ctx.shape, grad._array.dtype, type(grad._array)))
        return ScatterAdd.apply(zeros, ctx.dim, ctx.index, grad), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


@register("gather")
def gather(a, dim, index):
    dim = wrap_dim(dim, a.ndim)
    check_index("gather", a, dim, index)
    return Gather.apply(a, dim, index._array)


class ScatterAdd(Function):
    """``out = a`` with ``src[i][j]`` added at ``out[i][index[i][j]]`` (dim 1); repeated indices add up."""
    node_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, src):
        ctx.dim, ctx.index = dim, index
        out = a._array.copy()
        _device.index_add(out, _grid(index, dim), src._array[_within(index)])
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None, Gather.apply(grad, ctx.dim, ctx.index)

    @staticmethod
    def jvp(ctx, ta, _, __, t_src):
        return ctx._forward_cls.apply(ta, ctx.dim, ctx.primals[2], t_src)


@register("scatter_add")
def scatter_add(a, dim, index, src):
    dim = wrap_dim(dim, a.ndim)
    check_index("scatter_add", a, dim, index)
    return ScatterAdd.apply(a, dim, index._array, src)


@register("scatter_add_", torch=False)
def scatter_add_(a, dim, index, src):
    return a._recorded_inplace(scatter_add, dim, index, src)


class Scatter(Function):
    """``out = a`` with ``src[i][j]`` written at ``out[i][index[i][j]]`` (dim 1). The written places get
    no gradient from ``a``; ``src`` gets the gradient of the place it was written to."""
    node_name = "ScatterBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, src):
        ctx.dim, ctx.index = dim, index
        out = a._array.copy()
        out[_grid(index, dim)] = src._array[_within(index)]
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        grad_a = ScatterValue.apply(grad, ctx.dim, ctx.index, 0)  # overwritten places get nothing
        return grad_a, None, None, Gather.apply(grad, ctx.dim, ctx.index)

    @staticmethod
    def jvp(ctx, ta, _, __, t_src):
        return ctx._forward_cls.apply(ta, ctx.dim, ctx.primals[2], t_src)


class ScatterValue(Function):
    """``scatter(dim, index, value)``: one number written at every indexed place."""
    node_name = "ScatterBackward1"

    @staticmethod
    def forward(ctx, a, dim, index, value):
        ctx.dim, ctx.index = dim, index
        out = a._array.copy()
        out[_grid(index, dim)] = value
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        return ScatterValue.apply(grad, ctx.dim, ctx.index, 0), None, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        return ScatterValue.apply(ta, ctx.dim, ctx.index, 0)


@register("scatter")
def scatter(a, dim, index, src=None, value=None):
    """``scatter(dim, index, src)`` or ``scatter(dim, index, value)``; a number as ``src`` is a value."""
    dim = wrap_dim(dim, a.ndim)
    check_index("scatter", a, dim, index)
    src = value if src is None else src
    if isinstance(src, Tensor):
        return Scatter.apply(a, dim, index._array, src)
    return ScatterValue.apply(a, dim, index._array, src)


@register("scatter_", torch=False)
def scatter_(a, dim, index, src=None, value=None):
    return a._recorded_inplace(scatter, dim, index, src, value)


def _within(index):
    """The part of ``src`` that ``index`` addresses: its leading block of ``index``'s shape."""
    return tuple(slice(0, n) for n in index.shape)


class IndexAdd(Function):
    """``out = a`` with row ``source[k]`` added to row ``a[index[k]]`` along ``dim``."""
    node_name = "IndexAddBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, source, alpha):
        ctx.dim, ctx.index, ctx.alpha = dim, index, alpha
        out = a._array.copy()
        moved = np.moveaxis(out, dim, 0)  # a view: adding into it adds into out
        _device.index_add(moved, index, np.moveaxis(source._array, dim, 0) * alpha)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        picked = IndexSelect.apply(grad, ctx.dim, ctx.index)
        return grad, None, None, picked * ctx.alpha if ctx.alpha != 1 else picked, None

    @staticmethod
    def jvp(ctx, ta, _, __, t_source, ___):
        return IndexAdd.apply(ta, ctx.dim, ctx.index, t_source, ctx.alpha)


@register("index_add")
def index_add(a, dim, index, source, alpha=1):
    return IndexAdd.apply(a, wrap_dim(dim, a.ndim), index._array, source, alpha)


@register("index_add_", torch=False)
def index_add_(a, dim, index, source, alpha=1):
    return a._recorded_inplace(index_add, dim, index, source, alpha)


class IndexSelect(Function):
    """``out[k] = a[index[k]]`` along ``dim``; the gradient adds back into the picked rows."""
    node_name = "IndexSelectBackward0"

    @staticmethod
    def forward(ctx, a, dim, index):
        ctx.dim, ctx.index, ctx.shape = dim, index, a.shape
        return wrap(np.take(a._array, index, axis=dim))

    @staticmethod
    def backward(ctx, grad):
        zeros = wrap(_device.zeros(ctx.shape, grad._array.dtype, type(grad._array)))
        return IndexAdd.apply(zeros, ctx.dim, ctx.index, grad, 1), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


@register("index_select")
def index_select(a, dim, index):
    return IndexSelect.apply(a, wrap_dim(dim, a.ndim), index._array)


class Sort(Function):
    """Values in order along ``dim`` and where each came from; the gradient goes back to those places."""
    node_name = "SortBackward0"

    @staticmethod
    def forward(ctx, a, dim, descending, k=None):
        keys = a._array.astype(np.int64) if a.dtype.name == "bool" else a._array
        order = np.argsort(-keys if descending else keys, axis=dim, kind="stable")  # ties keep their order
        if k is not None:
            order = np.take(order, np.arange(k), axis=dim)
        ctx.dim, ctx.index, ctx.shape = dim, order, a.shape
        indices = wrap(order.astype(np.int64))
        ctx.mark_non_differentiable(indices)
        return wrap(np.take_along_axis(a._array, order, axis=dim)), indices

    @staticmethod
    def backward(ctx, grad, _grad_indices):
        zeros = wrap(_device.zeros(ctx.shape, grad._array.dtype, type(grad._array)))
        return ScatterAdd.apply(zeros, ctx.dim, ctx.index, grad), None, None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        return Gather.apply(ta, ctx.dim, ctx.index), None


class Topk(Sort):
    node_name = "TopkBackward0"


@register("sort")
def sort(a, dim=-1, descending=False, stable=False):
    values, indices = Sort.apply(a, wrap_dim(dim, a.ndim), descending)
    return _return_types.sort(values, indices)


@register("argsort")
def argsort(a, dim=-1, descending=False, stable=False):
    return sort(a, dim, descending).indices


@register("topk")
def topk(a, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - PyTorch's name
    dim = wrap_dim(dim, a.ndim)
    if not 0 <= k <= (a.shape[dim] if a.ndim else 1):
        raise RuntimeError("selected index k out of range")
    return _return_types.topk(*Topk.apply(a, dim, largest, k))


class Nonzero(Function):
    """The indices of the non-zero elements: one row per element (or, as_tuple, one tensor per dim).
    Never differentiable; a Function so that vmap meets it (and refuses it: the size depends on the values)."""

    @staticmethod
    def forward(ctx, a, as_tuple):
        if as_tuple:
            return tuple(wrap(np.asarray(i, dtype=np.int64)) for i in a._array.nonzero())
        return wrap(np.argwhere(a._array).astype(np.int64, copy=False))

    @staticmethod
    def jvp(ctx, *tangents):
        return None


@register("nonzero")
def nonzero(a, *, as_tuple=False):
    return Nonzero.apply(a, as_tuple)
