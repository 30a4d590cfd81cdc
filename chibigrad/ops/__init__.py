"""The differentiable operations, as functions (``torch.exp(x)``) and the
entry points Tensor methods and operators call (``x.exp()``, ``a * b``)."""
import numpy as np

from ..tensor import Tensor, numpy_names as _numpy_names, wrap
from . import _util, linalg, pointwise as pw, reduction as red, selection as sel, shape as sh
from .. import return_types as _return_types
from ._util import operand
from .linalg import bmm, linear, mm, mv
from . import linalg as _linalg
from .pointwise import where
from .reduction import std, var
from .shape import cat, chunk, split, stack, unflatten


def add(a, b, alpha=1):
    b = operand(b, a)
    return pw.Add.apply(a, b if alpha == 1 else b * alpha)


def sub(a, b, alpha=1):
    b = operand(b, a)
    return pw.Sub.apply(a, b if alpha == 1 else b * alpha)


def rsub(a, number):
    return pw.Rsub.apply(a, operand(number, a))


def mul(a, b, *, out=None):
    return _util.write_out("mul", pw.Mul.apply(a, operand(b, a)), out)


def matmul(a, b, *, out=None):
    return _util.write_out("matmul", _linalg.matmul(a, b), out)


def div(a, b):
    return pw.Div.apply(a, operand(b, a))


def rdiv(a, number):
    return mul(reciprocal(a), number)


def remainder(a, b):
    """``a % b`` (the sign of b, as Python's %)."""
    if isinstance(b, Tensor):
        return pw.Remainder.apply(operand(a, b), b)
    return pw.RemainderScalar.apply(a, operand(b, a))


def fmod(a, b):
    """C's fmod (the sign of a)."""
    if isinstance(b, Tensor):
        return pw.Fmod.apply(a, b)
    return pw.FmodScalar.apply(a, operand(b, a))


def neg(a):
    return pw.Neg.apply(a)


def pow(a, exponent):  # noqa: A001 - PyTorch's name
    if isinstance(exponent, Tensor):
        return pw.PowTensor.apply(a, exponent)
    return pw.Pow.apply(a, exponent)


def rpow(a, base):
    return pw.RPow.apply(base, a)


def _unary(cls):
    def op(a):
        return cls.apply(a)
    op.__name__ = cls.__name__.lower()
    op.__doc__ = f"Element-wise {op.__name__} (records {cls.node_name})."
    return op


exp, log, sqrt, abs, sin, cos, tanh, sigmoid, relu, floor, sign, reciprocal = map(  # noqa: A001
    _unary, (pw.Exp, pw.Log, pw.Sqrt, pw.Abs, pw.Sin, pw.Cos, pw.Tanh, pw.Sigmoid, pw.Relu, pw.Floor, pw.Sign,
             pw.Reciprocal))


def round(a, decimals=0):  # noqa: A001 - PyTorch's name
    """Round half to even; with ``decimals``, to that many decimal places (RoundBackward1)."""
    return pw.Round.apply(a) if decimals == 0 else pw.RoundDecimals.apply(a, decimals)
log2, log10, log1p, expm1 = map(_unary, (pw.Log2, pw.Log10, pw.Log1p, pw.Expm1))


def clamp(a, min=None, max=None):  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return pw.ClampTensor.apply(a, min, max)
    return pw.Clamp.apply(a, min, max)


def maximum(a, b):
    return pw.Maximum.apply(a, b)


def minimum(a, b):
    return pw.Minimum.apply(a, b)


def hypot(a, b):
    return pw.Hypot.apply(a, operand(b, a))


@_numpy_names
def sum(a, dim=None, keepdim=False, dtype=None):  # noqa: A001
    return (red.SumAll if dim is None else red.SumDim).apply(a, dim, keepdim, dtype)


@_numpy_names
def mean(a, dim=None, keepdim=False):
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {a.dtype.scalar_name}")
    return (red.MeanAll if dim is None else red.MeanDim).apply(a, dim, keepdim)


@_numpy_names
def max(a, dim=None, keepdim=False):  # noqa: A001
    if isinstance(dim, Tensor):
        return maximum(a, dim)
    return red.MaxAll.apply(a) if dim is None else _return_types.max(*red.MaxDim.apply(a, dim, keepdim))


@_numpy_names
def min(a, dim=None, keepdim=False):  # noqa: A001
    if isinstance(dim, Tensor):
        return minimum(a, dim)
    return red.MinAll.apply(a) if dim is None else _return_types.min(*red.MinDim.apply(a, dim, keepdim))


@_numpy_names
def amax(a, dim=(), keepdim=False):
    return red.Amax.apply(a, dim if dim != () else None, keepdim)


@_numpy_names
def amin(a, dim=(), keepdim=False):
    return red.Amin.apply(a, dim if dim != () else None, keepdim)


@_numpy_names
def prod(a, dim=None, keepdim=False):
    return (red.ProdAll if dim is None else red.ProdDim).apply(a, dim, keepdim)


@_numpy_names
def norm(a, p="fro", dim=None, keepdim=False):
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{a.dtype.scalar_name}")
    return red.Norm.apply(a, 2 if p in ("fro", 2) else p, dim, keepdim)


@_numpy_names
def softmax(a, dim):
    _check_softmax_dtype("softmax", a, dim)
    return red.Softmax.apply(a, dim)


@_numpy_names
def log_softmax(a, dim):
    _check_softmax_dtype("log_softmax", a, dim)
    return red.LogSoftmax.apply(a, dim)


def _check_softmax_dtype(name, a, dim):
    """PyTorch has no integer softmax kernel; its error names the kernel (one for the last dim)."""
    if a._array.dtype.kind != "f":
        axis = _util.wrap_dim(dim, a.ndim)
        last = "lastdim_" if axis == a.ndim - 1 or not a.ndim else ""
        raise NotImplementedError(f'"{name}_{last}kernel_impl" not implemented for \'{a.dtype.scalar_name}\'')


@_numpy_names
def logsumexp(a, dim, keepdim=False):
    return red.LogSumExp.apply(a, dim, keepdim)


@_numpy_names
def argmax(a, dim=None, keepdim=False):
    return _arg(np.argmax, a, dim, keepdim)


@_numpy_names
def argmin(a, dim=None, keepdim=False):
    return _arg(np.argmin, a, dim, keepdim)


def _arg(fn, a, dim, keepdim):
    if dim is None:
        return wrap(fn(a._array).astype(np.int64))
    dim = _util.wrap_dim(dim, a.ndim)
    if not a.ndim:  # a 0-d tensor's only element
        return wrap(np.zeros_like(a._array, dtype=np.int64))
    return wrap(fn(a._array, axis=dim, keepdims=keepdim).astype(np.int64))


def reshape(a, *shape):
    return sh.reshape(a, sh.check_shape(a, shape))


def view(a, *shape):
    return sh.View.apply(a, sh.check_shape(a, shape))


def flatten(a, start_dim=0, end_dim=-1):
    start, end = _util.wrap_dim(start_dim, a.ndim), _util.wrap_dim(end_dim, a.ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if a.ndim == 0:
        return reshape(a, 1)
    if start == end:
        return a
    return reshape(a, a.shape[:start] + (-1,) + a.shape[end + 1:])


@_numpy_names
def squeeze(a, dim=None):
    return sh.Squeeze.apply(a) if dim is None else sh.SqueezeDim.apply(a, dim)


@_numpy_names
def unsqueeze(a, dim):
    return sh.Unsqueeze.apply(a, dim)


def tril(a, diagonal=0):
    return sh.Tril.apply(a, diagonal)


def triu(a, diagonal=0):
    return sh.Triu.apply(a, diagonal)


def transpose(a, dim0, dim1):
    return sh.Transpose.apply(a, dim0, dim1)


def t(a):
    if a.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
    return sh.T.apply(a) if a.ndim == 2 else a


def permute(a, *dims):
    dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    if len(dims) != a.ndim:  # (PyTorch's text names sparse_coo whatever the layout)
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           "of the desired ordering of dimensions i.e. input.dim() = "
                           f"{a.ndim} is not equal to len(dims) = {len(dims)}")
    axes = tuple(_util.wrap_dim(d, a.ndim) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return sh.Permute.apply(a, axes)


def expand(a, *shape):
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    return sh.Expand.apply(a, shape)


def unbind(a, dim=0):
    return sh.Unbind.apply(a, dim)


def clone(a):
    return a.clone()


def detach(a):
    return a.detach()


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.allclose(*_arrays(a, b), rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return wrap(np.isclose(*_arrays(a, b), rtol=rtol, atol=atol, equal_nan=equal_nan))


def nonzero(a, *, as_tuple=False):
    return a.nonzero(as_tuple=as_tuple)


def isnan(a):
    return a.isnan()


def isinf(a):
    return a.isinf()


def isfinite(a):
    return a.isfinite()


def equal(a, b):
    if a.shape != b.shape:
        return False
    x, y = _arrays(a, b)
    return bool((x == y).all())


def _arrays(a, b):
    """The arrays of tensor ``a`` and of ``b`` (a tensor or data), devices checked."""
    x, y = a._array, b._array if isinstance(b, Tensor) else np.asarray(b)
    return (x, y) if type(x) is type(y) else _util.cpu_scalars(x, y)


# ---- picking and placing by index (ops/selection.py) ----

def gather(a, dim, index):
    dim = _util.wrap_dim(dim, a.ndim)
    sel.check_index("gather", a, dim, index)
    return sel.Gather.apply(a, dim, index._array)


def scatter(a, dim, index, src=None, value=None):
    """``scatter(dim, index, src)`` or ``scatter(dim, index, value)``; a number as ``src`` is a value."""
    dim = _util.wrap_dim(dim, a.ndim)
    sel.check_index("scatter", a, dim, index)
    src = value if src is None else src
    if isinstance(src, Tensor):
        return sel.Scatter.apply(a, dim, index._array, src)
    return sel.ScatterValue.apply(a, dim, index._array, src)


def scatter_add(a, dim, index, src):
    dim = _util.wrap_dim(dim, a.ndim)
    sel.check_index("scatter_add", a, dim, index)
    return sel.ScatterAdd.apply(a, dim, index._array, src)


def index_select(a, dim, index):
    return sel.IndexSelect.apply(a, _util.wrap_dim(dim, a.ndim), index._array)


def index_add(a, dim, index, source, alpha=1):
    return sel.IndexAdd.apply(a, _util.wrap_dim(dim, a.ndim), index._array, source, alpha)


def sort(a, dim=-1, descending=False, stable=False):
    values, indices = sel.Sort.apply(a, _util.wrap_dim(dim, a.ndim), descending)
    return _return_types.sort(values, indices)


def argsort(a, dim=-1, descending=False, stable=False):
    return sort(a, dim, descending).indices


def topk(a, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - PyTorch's name
    dim = _util.wrap_dim(dim, a.ndim)
    if not 0 <= k <= (a.shape[dim] if a.ndim else 1):
        raise RuntimeError("selected index k out of range")
    return _return_types.topk(*sel.Topk.apply(a, dim, largest, k))


@_numpy_names
def all(a, dim=None):  # noqa: A001
    return a.all(dim)


@_numpy_names
def any(a, dim=None):  # noqa: A001
    return a.any(dim)


def dot(a, b):
    return linalg.dot(a, b)


__all__ = [name for name in dir() if not name.startswith("_")]
