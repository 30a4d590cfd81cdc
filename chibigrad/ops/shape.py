"""Shape ops, indexing, and joining/splitting tensors.

Views (reshape, transpose, basic indexing, ...) share memory *and* the
version counter with their input, so an in-place change through a view is
seen by saved tensors of the base, as in PyTorch.
"""
import numpy as np

from .. import _device
from .._dtype import Size, result_type
from ..autograd.function import Function
from ..tensor import Tensor, numpy_names, wrap
from ._util import check_device, register, warn_once, wrap_dim


def view_of(a, array):
    """Wrap ``array``, a numpy view of ``a``'s data, sharing a's version counter."""
    out = wrap(array)
    out._vc = a._version_counter
    out._base = a._base if a._base is not None else a
    out._view_version = out._vc[0]  # its grad_fn, set next, is up to date (see Tensor.grad_fn)
    if a._is_inference:  # a view of an inference tensor is one too
        out._is_inference = True
    return out


class View(Function):
    node_name = "ViewBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        ctx.in_shape = a.shape
        try:
            return view_of(a, np.reshape(a._array, shape, copy=False))
        except ValueError:
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                               "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.in_shape), None

    @staticmethod
    def jvp(ctx, t, _):
        return t.reshape(ctx.result.shape)  # (a tangent need not be contiguous where the value is)


class UnsafeView(Function):
    """A reshape of a fresh result (a copy, a product), which autograd need not track as a view."""
    node_name = "UnsafeViewBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        ctx.in_shape = a.shape
        return wrap(np.reshape(a._array, shape))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.in_shape), None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


class ReshapeAlias(View):
    """``reshape`` as a view of data that is not row-major (PyTorch's _reshape_alias)."""
    node_name = "ReshapeAliasBackward0"


@register("reshape")
def reshape(a, *shape):
    """A view when the data allows it (ViewBackward0; ReshapeAliasBackward0 when the data is
    not row-major), else a reshaped contiguous copy (UnsafeViewBackward0 over CloneBackward0)."""
    shape = check_shape(a, shape)
    try:
        np.reshape(a._array, shape, copy=False)
    except ValueError:
        return UnsafeView.apply(a.clone(), shape)
    return View.apply(a, shape) if a._array.flags.c_contiguous else ReshapeAlias.apply(a, shape)


def check_shape(a, shape):
    """Resolve -1 and report PyTorch's error for a size that does not fit."""
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else tuple(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if shape.count(-1) == 0 and int(np.prod(shape)) != a.numel() or shape.count(-1) and a.numel() % max(
            -int(np.prod(shape)), 1):
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {a.numel()}")
    return shape


@register("view", torch=False)
def view(a, *shape):
    return View.apply(a, check_shape(a, shape))


@register("view_as", torch=False)
def view_as(a, other):
    return view(a, other.shape)


@register("reshape_as", torch=False)
def reshape_as(a, other):
    return reshape(a, other.shape)


@register("flatten")
def flatten(a, start_dim=0, end_dim=-1):
    start, end = wrap_dim(start_dim, a.ndim), wrap_dim(end_dim, a.ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if a.ndim == 0:
        return reshape(a, 1)
    if start == end:
        return a
    return reshape(a, a.shape[:start] + (-1,) + a.shape[end + 1:])


class Squeeze(Function):
    node_name = "SqueezeBackward0"

    @staticmethod
    def forward(ctx, a, dim=None):
        ctx.in_shape = a.shape
        x = a._array
        if dim is not None:
            dim = wrap_dim(dim, x.ndim)
            out = x.squeeze(dim) if x.ndim and x.shape[dim] == 1 else x
        else:
            out = x.squeeze()
        return view_of(a, out)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.in_shape), None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


class SqueezeDim(Squeeze):
    node_name = "SqueezeBackward1"


class SqueezeMatmul(Squeeze):
    """The squeeze torch.matmul does for a 1-D left operand."""
    node_name = "SqueezeBackward4"


@register("squeeze")
@numpy_names
def squeeze(a, dim=None):
    return Squeeze.apply(a) if dim is None else SqueezeDim.apply(a, dim)


class Unsqueeze(Function):
    node_name = "UnsqueezeBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = wrap_dim(dim, a.ndim + 1)
        return view_of(a, np.expand_dims(a._array, ctx.dim))

    @staticmethod
    def backward(ctx, grad):
        return grad.squeeze(ctx.dim), None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


@register("unsqueeze")
@numpy_names
def unsqueeze(a, dim):
    return Unsqueeze.apply(a, dim)


class Transpose(Function):
    node_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx, a, dim0, dim1):
        dim0, dim1 = wrap_dim(dim0, a.ndim), wrap_dim(dim1, a.ndim)
        ctx.dims = (dim0, dim1)
        return view_of(a, np.swapaxes(a._array, dim0, dim1) if a.ndim else a._array)

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(*ctx.dims), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


@register("transpose")
def transpose(a, dim0, dim1):
    return Transpose.apply(a, dim0, dim1)


class T(Function):
    """``a.t()`` of a matrix (F.linear's ``weight.t()``): its gradient is transposed back."""
    node_name = "TBackward0"

    @staticmethod
    def forward(ctx, a):
        return view_of(a, a._array.T)

    @staticmethod
    def backward(ctx, grad):
        return grad.t()  # (a graph built by create_graph shows TBackward0)

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


@register("t", torch=False)
def t(a):
    if a.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
    return T.apply(a) if a.ndim == 2 else a


class Permute(Function):
    node_name = "PermuteBackward0"

    @staticmethod
    def forward(ctx, a, dims):
        ctx.inverse = tuple(np.argsort(dims))
        return view_of(a, np.transpose(a._array, dims))

    @staticmethod
    def backward(ctx, grad):
        return grad.permute(ctx.inverse), None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


@register("permute")
def permute(a, *dims):
    dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    if len(dims) != a.ndim:  # (PyTorch's text names sparse_coo whatever the layout)
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           "of the desired ordering of dimensions i.e. input.dim() = "
                           f"{a.ndim} is not equal to len(dims) = {len(dims)}")
    axes = tuple(wrap_dim(d, a.ndim) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return Permute.apply(a, axes)


@register("movedim")
def movedim(a, source, destination):
    """Dims ``source`` moved to ``destination`` (ints or tuples of them), the others in order: a permute."""
    source = [wrap_dim(d, a.ndim) for d in (source if isinstance(source, (tuple, list)) else (source,))]
    destination = [wrap_dim(d, a.ndim) for d in (destination if isinstance(destination, (tuple, list))
                                                 else (destination,))]
    rest = iter([d for d in range(a.ndim) if d not in source])
    placed = dict(zip(destination, source))
    return permute(a, [placed[i] if i in placed else next(rest) for i in range(a.ndim)])


T_DEPRECATED = ("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
                "will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
                "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor. (Triggered "
                "internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4314.)")


def reversed_dims(a):
    """``a.T``: the dims in reverse order."""
    if a.ndim != 2:  # PyTorch warns once per process (TORCH_WARN_ONCE)
        warn_once("Tensor.T is deprecated on 0-D tensors. This function is the identity in these "
                  "cases. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                  "TensorShape.cpp:4321.)" if a.ndim == 0 else T_DEPRECATED)
    return permute(a, tuple(range(a.ndim))[::-1])


def transposed_matrices(a):
    """``a.mT``: each matrix of a batch transposed."""
    return transpose(a, -2, -1)


Tensor.T, Tensor.mT = property(reversed_dims), property(transposed_matrices)  # attributes, not methods


class Expand(Function):
    """A broadcast view; backward sums the gradient back to the input's shape."""
    node_name = "ExpandBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        shape = _expanded_shape(a, shape)
        ctx.in_shape = a.shape
        return view_of(a, np.broadcast_to(a._array, shape))

    @staticmethod
    def backward(ctx, grad):
        return grad.sum_to_size(ctx.in_shape), None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


def _expanded_shape(a, sizes):
    """``sizes`` with each -1 replaced by a's size there, checked as PyTorch checks them
    (from the last dimension back, which is the one its error names)."""
    shape, lead = a.shape, len(sizes) - a.ndim
    if lead < 0:
        raise RuntimeError(f"expand({a.type()}{{{list(shape)}}}, size={list(sizes)}): the number of sizes provided "
                           f"({len(sizes)}) must be greater or equal to the number of dimensions in the tensor "
                           f"({a.ndim})")
    target = list(sizes)
    for i in reversed(range(len(sizes))):
        size = shape[i - lead] if i >= lead else None
        if sizes[i] == -1:
            if size is None:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                                   f"dimension {i}")
            target[i] = size
        elif size is not None and size != 1 and size != sizes[i]:
            raise RuntimeError(f"The expanded size of the tensor ({sizes[i]}) must match the existing size ({size}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(shape)}")
    return tuple(target)


@register("expand", torch=False)
def expand(a, *shape):
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    return Expand.apply(a, shape)


@register("expand_as", torch=False)
def expand_as(a, other):
    return expand(a, other.shape)


class Index(Function):
    """``x[key]``; the gradient is scattered back into zeros of x's shape."""
    node_name = "IndexBackward0"

    @staticmethod
    def forward(ctx, a, key):
        ctx.key, ctx.in_shape = key, a.shape
        basic = is_basic(key)
        try:
            out = _device.as_array(a._array[_as_view_key(key) if basic else key])
        except IndexError as err:
            raise IndexError(index_error(a.shape, key, err)) from None
        return view_of(a, out) if basic else wrap(out)

    @staticmethod
    def backward(ctx, grad):
        return IndexGrad.apply(grad, ctx.key, ctx.in_shape), None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


class Select(Index):
    node_name = "SelectBackward0"


class Slice(Index):
    node_name = "SliceBackward0"


class Alias(Index):
    node_name = "AliasBackward0"


class Unsqueezing(Index):
    node_name = "UnsqueezeBackward0"


class IndexGrad(Function):
    """Adds ``grad`` into zeros at ``key`` (repeated indices add up). Its own
    backward is indexing again, so double backward through indexing works."""
    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, grad, key, shape):
        ctx.key = key
        out = np.zeros_like(grad._array, shape=shape)
        _device.index_add(out, key, grad._array)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        return grad[ctx.key], None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


def index_error(shape, key, err):
    """PyTorch's text for an index numpy refused (numpy's own names axes and arrays);
    numpy's text where the key is odd in some other way."""
    items = key if isinstance(key, tuple) else (key,)
    used = sum(k.ndim if _is_mask(k) else 0 if k is None or k is Ellipsis else 1 for k in items)
    if used > len(shape):
        return ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to "
                "convert a 0-dim tensor to a number" if not shape else
                f"too many indices for tensor of dimension {len(shape)}")
    sizes, d, arrays_seen = list(shape), 0, 0  # sizes: as PyTorch reports them, with None's new dims
    for k in items:
        if k is None:
            sizes.insert(d, 1)
        elif k is Ellipsis:
            d += len(shape) - used - 1
        elif _is_mask(k):
            for j, (m, n) in enumerate(zip(k.shape, sizes[d:])):
                if m != n:
                    return (f"The shape of the mask {list(k.shape)} at index {j} does not match the shape of the "
                            f"indexed tensor {sizes} at index {d + j}")
            d += k.ndim - 1
        elif not isinstance(k, slice):
            host = _device.to_device(k, _device.cpu) if hasattr(k, "ndim") and k.ndim else np.asarray(k)
            out = host[(host < -sizes[d]) | (host >= sizes[d])] if host.dtype.kind in "iu" else ()
            if len(out):  # (an index array is numbered among the index arrays, as in PyTorch's message)
                where = arrays_seen if host.ndim else d
                return f"index {int(out[0])} is out of bounds for dimension {where} with size {sizes[d]}"
            arrays_seen += host.ndim > 0
        d += 1
    return str(err)


def _is_mask(k):
    return getattr(k, "dtype", None) == bool


def is_basic(key):
    """True when numpy indexing with ``key`` returns a view (no arrays or lists)."""
    items = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (int, np.integer, slice)) for k in items)


def _as_view_key(key):
    """``key`` with a trailing ``...``: then numpy returns a 0-d view, not a copied scalar,
    when every dim gets an integer (``x[0]`` of a vector is a view in PyTorch)."""
    items = key if isinstance(key, tuple) else (key,)
    return items if Ellipsis in items else items + (Ellipsis,)


def index(a, key):
    """Pick the Function whose name matches what PyTorch records for ``key``."""
    if not is_basic(key):
        return Index.apply(a, key)
    items = key if isinstance(key, tuple) else (key,)
    cls = Alias
    for k in items:
        if isinstance(k, (int, np.integer)):
            cls = Select
        elif isinstance(k, slice) and k != slice(None):
            cls = Slice
        elif k is None:
            cls = Unsqueezing
    return cls.apply(a, key)


class IndexPut(Function):
    """``x[mask] = value``, ``x[[0, 2]] = value`` (index_put_): the overwritten part of x
    gets no gradient, ``value`` gets the gradient of that part. (``x[0] = value`` is
    ``x[0].copy_(value)``, a change through a view: see autograd/views.py.)"""
    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, dst, key, value):
        ctx.key = key
        out = dst._array.copy()
        if isinstance(value, Tensor):  # a copy, so value may be on another device, as in PyTorch
            ctx.value_device = value.device
            value = _device.to_device(value._array, _device.device_of(out))
        try:
            out[key] = value
        except IndexError as err:
            raise IndexError(index_error(out.shape, key, err)) from None
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        keep = np.ones_like(grad._array, dtype=bool)
        keep[ctx.key] = False
        return grad * wrap(keep), None, grad[ctx.key].to(ctx.value_device) if ctx.needs_input_grad[2] else None

    @staticmethod
    def jvp(ctx, t_dst, _, t_value):
        return IndexPut.apply(t_dst, ctx.key, 0.0 if t_value is None else t_value)


class Repeat(Function):
    """``x.repeat(2, 3)``: the tensor tiled (numpy's ``tile``); each copy's gradient adds up."""
    node_name = "RepeatBackward0"
    saved_values = ("repeats", "self_sym_sizes")

    @staticmethod
    def forward(ctx, a, repeats):
        ctx.repeats, ctx.self_sym_sizes = repeats, tuple(a.shape)
        x = a._array.reshape((1,) * (len(repeats) - a.ndim) + a.shape)
        return wrap(np.tile(x, repeats))

    @staticmethod
    def backward(ctx, grad):
        padded = (1,) * (len(ctx.repeats) - len(ctx.self_sym_sizes)) + ctx.self_sym_sizes
        split = [n for pair in zip(ctx.repeats, padded) for n in pair]  # (r0, s0, r1, s1, ...)
        copies = tuple(range(0, 2 * len(padded), 2))
        return grad.reshape(split).sum(copies).reshape(ctx.self_sym_sizes), None

    @staticmethod
    def jvp(ctx, ta, _):
        return ta.repeat(*ctx.repeats)


@register("repeat", torch=False)
def repeat(a, *sizes):
    repeats = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    if len(repeats) < a.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    return Repeat.apply(a, tuple(int(r) for r in repeats))


def _diagonal_view(array, offset, dim1, dim2):
    """The writable view of ``array``'s diagonal ``offset`` in the plane (dim1, dim2), last. (numpy
    marks its diagonal view read-only by convention only; CuPy's is writable.)"""
    view = array.diagonal(offset, dim1, dim2)
    if isinstance(view, np.ndarray) and not view.flags.writeable and array.flags.writeable:
        view.flags.writeable = True
    return view


class Diagonal(Function):
    """A view of one diagonal; its gradient is zeros with ``grad`` written along that diagonal."""
    node_name = "DiagonalBackward0"

    @staticmethod
    def forward(ctx, a, offset, dim1, dim2):
        ctx.shape, ctx.args = a.shape, (offset, dim1, dim2)
        return view_of(a, _diagonal_view(a._array, offset, dim1, dim2))

    @staticmethod
    def backward(ctx, grad):
        return DiagonalGrad.apply(grad, ctx.shape, *ctx.args), None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


class DiagonalGrad(Function):
    """Zeros of the input's shape with ``grad`` along the diagonal; its own gradient is the diagonal again."""
    node_name = "DiagonalBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, shape, offset, dim1, dim2):
        ctx.args = (offset, dim1, dim2)
        out = _device.zeros(shape, grad._array.dtype, type(grad._array))
        _diagonal_view(out, offset, dim1, dim2)[...] = grad._array
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        return Diagonal.apply(grad, *ctx.args), None, None, None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


@register("diagonal")
def diagonal(a, offset=0, dim1=0, dim2=1):
    """``a``'s diagonal ``offset`` (above the main one when positive) in the plane of ``dim1`` and ``dim2``."""
    dim1, dim2 = wrap_dim(dim1, a.ndim), wrap_dim(dim2, a.ndim)
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return Diagonal.apply(a, offset, dim1, dim2)


@register("repeat_interleave")
def repeat_interleave(a, repeats=None, dim=None, *, output_size=None):
    """Each element ``repeats`` times in a row along ``dim`` (the flattened tensor when None), where
    ``repeat`` tiles the whole tensor. A number of repeats is PyTorch's unsqueeze, expand and copy;
    a tensor of them selects indices. ``torch.repeat_interleave(counts)`` gives index i counts[i] times."""
    if repeats is None:
        return wrap(np.repeat(np.arange(a.numel()), a._array.reshape(-1)))
    if dim is None:
        a, dim = a.flatten(), 0
    dim = wrap_dim(dim, a.ndim)
    if isinstance(repeats, Tensor):
        index = wrap(np.repeat(np.arange(a.shape[dim]), np.broadcast_to(repeats._array, (a.shape[dim],))))
        return a.index_select(dim, index)
    expanded = list(a.shape)
    expanded.insert(dim + 1, int(repeats))
    flat = a.shape[:dim] + (a.shape[dim] * int(repeats),) + a.shape[dim + 1:]
    return a.unsqueeze(dim + 1).expand(expanded).clone().view(flat)


@register("__getitem__", torch=False)
def getitem(a, key):
    return index(a, index_key(key, a._array))


@register("__setitem__", torch=False)
def setitem(a, key, value):
    key = index_key(key, a._array)
    if is_basic(key):  # x[0], x[1:]: as PyTorch does, copy_ into the view (autograd/views.py)
        view = a[key]
        value = value if isinstance(value, Tensor) else wrap(_device.as_array(value))
        if value.shape != view.shape:
            value = _without_leading_ones(value)
            value.detach().expand(view.shape)  # only checks: PyTorch's setitem expands, so its error names expand
        view.copy_(value)
    else:  # x[mask], x[[0, 2]]: index_put_
        a._recorded_inplace(IndexPut.apply, key, _without_leading_ones(value) if isinstance(value, Tensor) else value)


def _without_leading_ones(value):
    """PyTorch's ``x[i] = value`` first drops the value's leading 1-dims (as numpy's assignment
    does), so a (1, 27) result fits a (27,) row; ``copy_`` alone would refuse it."""
    ones = 0
    while ones < value.ndim and value.shape[ones] == 1:
        ones += 1
    return value.view(value.shape[ones:]) if ones else value


def index_key(index, array):
    """Tensors inside an index become arrays (on ``array``'s device)."""
    if isinstance(index, tuple):
        return tuple(_index_array(i, array) if isinstance(i, Tensor) else i for i in index)
    return _index_array(index, array) if isinstance(index, Tensor) else index


def _index_array(index, array):
    """An index tensor's array; PyTorch moves indices from the CPU to the indexed tensor's device."""
    idx = index._array
    if type(idx) is not type(array):
        if type(idx) is not np.ndarray:
            raise RuntimeError(f"indices should be either on cpu or on the same device as the indexed tensor "
                               f"({_device.device_of(array)})")
        idx = _device.to_device(idx, _device.device_of(array))
    return idx


class Cat(Function):
    node_name = "CatBackward0"

    @staticmethod
    def forward(ctx, dim, *tensors):
        for i, t in enumerate(tensors):
            if not t.ndim:
                raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
        dim = wrap_dim(dim, tensors[0].ndim)
        _check_cat(tensors, dim)
        ctx.dim, ctx.sizes = dim, [t.shape[dim] for t in tensors]
        return wrap(np.concatenate(_promoted_arrays(tensors), axis=dim))

    @staticmethod
    def backward(ctx, grad):
        return (None,) + tuple(grad.split(ctx.sizes, ctx.dim))

    @staticmethod
    def jvp(ctx, _, *tangents):
        return ctx._forward_cls.apply(ctx.primals[0], *tangents)


def _promoted_arrays(tensors):
    """The tensors' arrays in PyTorch's promoted dtype (int64 with float32 is float32; numpy says float64)."""
    dt = result_type(*tensors).np_type
    return [t._array.astype(dt, copy=False) for t in tensors]


def _check_cat(tensors, dim):
    """PyTorch's errors for tensors that cannot be joined along ``dim``."""
    first = tensors[0].shape
    for i, t in enumerate(tensors[1:], 1):
        if t.ndim != len(first):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(first)} and {t.ndim}")
        for d, (expected, got) in enumerate(zip(first, t.shape)):
            if d != dim and expected != got:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. Expected size {expected} "
                                   f"but got size {got} for tensor number {i} in the list.")


@register()
@numpy_names
def cat(tensors, dim=0):
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    check_device("cat", *[("tensors", t) for t in tensors])
    return Cat.apply(dim, *tensors)


class Stack(Function):
    node_name = "StackBackward0"

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim = wrap_dim(dim, tensors[0].ndim + 1)
        for i, t in enumerate(tensors):
            if t.shape != tensors[0].shape:
                raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                                   f"entry 0 and {list(t.shape)} at entry {i}")
        return wrap(np.stack(_promoted_arrays(tensors), axis=ctx.dim))

    @staticmethod
    def backward(ctx, grad):
        return (None,) + tuple(grad.unbind(ctx.dim))

    @staticmethod
    def jvp(ctx, _, *tangents):
        return ctx._forward_cls.apply(ctx.primals[0], *tangents)


@register()
@numpy_names
def stack(tensors, dim=0):
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    check_device("cat", *[("tensors", t) for t in tensors])  # PyTorch's stack is a cat
    return Stack.apply(dim, *tensors)


class Split(Function):
    """Several outputs, one node: output i of SplitBackward0 is piece i."""
    node_name = "SplitBackward0"

    @staticmethod
    def forward(ctx, a, sizes, dim):
        ctx.dim = dim
        bounds = np.cumsum(sizes)[:-1].tolist()  # plain ints: fine for any device's split
        return _multi_output_views(ctx, a, np.split(a._array, bounds, axis=ctx.dim))

    @staticmethod
    def backward(ctx, *grads):
        return cat(list(grads), ctx.dim), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


def _multi_output_views(ctx, a, arrays):
    """Views of ``a``, marked as the outputs of one op: PyTorch refuses to change them in place."""
    outs = tuple(view_of(a, array) for array in arrays)
    for nr, out in enumerate(outs):
        out._multi_output = (nr, ctx.name().removesuffix("Backward0"))
    return outs


class SplitWithSizes(Split):
    node_name = "SplitWithSizesBackward0"


class Unbind(Function):
    node_name = "UnbindBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        if not a.ndim:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        ctx.dim = wrap_dim(dim, a.ndim)
        lead = (slice(None),) * ctx.dim
        return _multi_output_views(ctx, a, [a._array[lead + (i, Ellipsis)] for i in range(a.shape[ctx.dim])])

    @staticmethod
    def backward(ctx, *grads):
        return stack(list(grads), ctx.dim), None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


@register("unbind")
def unbind(a, dim=0):
    return Unbind.apply(a, dim)


@register("split")
def split(a, split_size_or_sections, dim=0):
    """Pieces of ``split_size`` along ``dim`` (the last may be smaller), or of the given sizes."""
    dim = wrap_dim(dim, a.ndim)
    length = a.shape[dim]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
        if step == 0 and length:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {length}")
        sizes = [min(step, length - i) for i in range(0, length, max(step, 1))] or [0]
        return Split.apply(a, sizes, dim)
    if sum(split_size_or_sections) != length:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {length} (input tensor's "
                           f"size at dimension {dim}), but got split_sizes={list(split_size_or_sections)}")
    return SplitWithSizes.apply(a, list(split_size_or_sections), dim)


@register("chunk")
def chunk(a, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    dim = wrap_dim(dim, a.ndim)
    length = a.shape[dim]
    return split(a, -(-length // chunks), dim)


class IndexAlongDim:
    """Helpers for ops that pick one element along a dim (max/min with dim)."""

    @staticmethod
    def scatter(grad, idx, dim, keepdim, in_shape):
        """``grad`` placed at ``idx`` along ``dim`` in zeros of ``in_shape``."""
        if not keepdim:
            grad = grad.unsqueeze(dim)
            idx = np.expand_dims(idx, dim)
        xp = _device.array_module(idx)  # the index arrays must be on idx's device
        full_idx = [xp.arange(n).reshape([n if i == d else 1 for i in range(idx.ndim)]) for d, n in enumerate(idx.shape)]
        full_idx[dim] = idx
        return IndexGrad.apply(grad, tuple(full_idx), in_shape)


class Tril(Function):
    """Keep the lower triangle (``diagonal`` shifts it) of the last two dims; zeros elsewhere.

    The op is a mask, so the gradient is the same mask applied to the incoming gradient."""
    node_name = "TrilBackward0"
    keep = staticmethod(np.tril)

    @staticmethod
    def forward(ctx, a, diagonal):
        ctx.diagonal = diagonal
        keep = ctx._forward_cls.keep
        return wrap(keep(_matrices(keep.__name__, a), diagonal))

    @staticmethod
    def backward(ctx, grad):
        return ctx._forward_cls.apply(grad, ctx.diagonal), None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


class Triu(Tril):
    """Keep the upper triangle; see Tril."""
    node_name = "TriuBackward0"
    keep = staticmethod(np.triu)


@register("tril")
def tril(a, diagonal=0):
    return Tril.apply(a, diagonal)


@register("triu")
def triu(a, diagonal=0):
    return Triu.apply(a, diagonal)


def _matrices(name, a):
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    return a._array


@register("unflatten")
def unflatten(input, dim, sizes):
    """``input.unflatten(dim, sizes)``: a view (ViewBackward0) with dim ``dim`` split into ``sizes``."""
    dim = wrap_dim(dim, input.ndim)
    sizes = list(sizes)
    known = Size(s for s in sizes if s != -1).numel()
    if -1 in sizes and sizes.count(-1) == 1 and known and input.shape[dim] % known == 0:
        sizes[sizes.index(-1)] = input.shape[dim] // known
    if Size(sizes).numel() != input.shape[dim] or -1 in sizes:
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {dim} "
                           f"({input.shape[dim]}) in the input tensor")
    return input.view(*input.shape[:dim], *sizes, *input.shape[dim + 1:])
