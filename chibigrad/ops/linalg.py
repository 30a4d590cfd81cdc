"""Matrix products. Gradients of C = A @ B: dA = dC @ B^T, dB = A^T @ dC."""
import math

import numpy as np

from ..autograd.function import Function
from ..tensor import Tensor, wrap
from ._util import check_broadcast, check_device, operand, register, save_needed, write_out
from .shape import SqueezeMatmul, UnsafeView


class Mm(Function):
    node_name = "MmBackward0"
    saved_names = ("mat2", "self")  # in PyTorch's order (see save_needed)

    @staticmethod
    def forward(ctx, a, b):
        save_needed(ctx, a, b)
        ctx.mat2_column_major = _column_major(b._array)
        x, y = a._array, b._array
        if x.shape[-1] == 1:  # an outer product (per-sample gradients make batches of them): numpy's matmul
            return wrap(x * y)  # takes 10-30x longer than this broadcast product, which gives the same numbers
        return wrap(x @ y)

    @staticmethod
    def backward(ctx, grad):
        b, a = ctx.saved_tensors
        return (grad @ _t(b) if ctx.needs_input_grad[0] else None,
                _mat2_grad(ctx, grad, a) if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.primals
        return ta @ b + a @ tb  # the product rule


def _t(m):
    """``m.mT``; a matrix as PyTorch's formulas transpose it, with ``t()``, so that a graph
    built by create_graph shows TBackward0 where PyTorch's does."""
    return m.t() if m.ndim == 2 else m.mT


def _column_major(m):
    """Whether ``m`` is a transposed matrix, such as ``weight.t()`` in F.linear."""
    return m.ndim == 2 and m.flags.f_contiguous and not m.flags.c_contiguous


def _mat2_grad(ctx, grad, mat1):
    """``mat1^T @ grad`` with mat2's layout: for a column-major mat2 PyTorch computes
    ``(grad^T @ mat1)^T``, so that weight.grad, one transpose further back, is row-major."""
    return _t(_t(grad) @ mat1) if ctx.mat2_column_major else _t(mat1) @ grad


class Bmm(Mm):
    node_name = "BmmBackward0"

    @staticmethod
    def backward(ctx, grad):
        b, a = ctx.saved_tensors  # recorded with bmm, as PyTorch records them
        return (grad.bmm(b.mT) if ctx.needs_input_grad[0] else None,
                a.mT.bmm(grad) if ctx.needs_input_grad[1] else None)


class Dot(Function):
    node_name = "DotBackward0"
    saved_names = ("tensor", "self")  # in PyTorch's order (see save_needed)

    @staticmethod
    def forward(ctx, a, b):
        save_needed(ctx, a, b)
        return wrap(a._array @ b._array)

    @staticmethod
    def backward(ctx, grad):
        b, a = ctx.saved_tensors
        return (grad * b if ctx.needs_input_grad[0] else None,
                grad * a if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.primals
        return ta.dot(b) + a.dot(tb)


class Mv(Function):
    node_name = "MvBackward0"
    saved_names = ("vec", "self")  # in PyTorch's order (see save_needed)

    @staticmethod
    def forward(ctx, a, v):
        save_needed(ctx, a, v)
        return wrap(a._array @ v._array)

    @staticmethod
    def backward(ctx, grad):
        v, a = ctx.saved_tensors
        return (grad.unsqueeze(1) * v if ctx.needs_input_grad[0] else None,
                _t(a) @ grad if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, ta, tv):
        a, v = ctx.primals
        return ta.mv(v) + a.mv(tv)


@register("matmul", "__matmul__")
def matmul(a, other, *, out=None):
    return write_out("matmul", _matmul_impl(a, other), out)


@register("__rmatmul__", torch=False)
def rmatmul(a, other):
    return matmul(operand(other, a), a)


def _matmul_impl(a, b):
    """torch.matmul, decomposed as PyTorch's ``_matmul_impl`` decomposes it, so that the graph
    holds the same nodes: dot, mv or mm for 1-D and 2-D operands; a batch of matrices times a
    matrix or vector folded into one mm or mv (``_folded``); any other batch through expand,
    reshape and bmm (``_batched``)."""
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D")
    if a.ndim == 1 and b.ndim == 1:
        return dot(a, b)
    if a.ndim == 2 and b.ndim == 1:
        return mv(a, b)
    if a.ndim == 1 and b.ndim == 2:
        return SqueezeMatmul.apply(mm(a.unsqueeze(0), b), -2)
    if a.ndim == 2 and b.ndim == 2:
        return mm(a, b)
    if a.ndim == 3 and b.ndim == 3 and a.shape[0] != b.shape[0]:  # a batch of one that needs a gradient
        if a.shape[0] == 1 and a.requires_grad:  # is squeezed to a matrix, so that mm, not bmm and a sum
            a = a.squeeze(0)  # over the other batch, computes its gradient
        elif b.shape[0] == 1 and b.requires_grad:
            b = b.squeeze(0)
    if _should_fold(a, b):
        return _folded(a, b)
    return _batched(a, b)


def _should_fold(a, b):
    """PyTorch's rule: fold when one side is a batch (3-D or more) and the other a matrix or
    vector, and either the small side needs a gradient (a bmm would make a batch of its
    gradients only to sum them) or the batch flattens into a matrix without a copy."""
    big, small = (a._array, b) if a.ndim >= b.ndim else (np.swapaxes(b._array, -1, -2), a)
    if big.ndim < 3 or small.ndim > 2:
        return False
    if small.requires_grad:
        return True
    if a.ndim == 2:  # folding would end in a transposed result made contiguous: a copy
        return False
    return big.size == 0 or all(big.strides[i] == big.strides[i + 1] * big.shape[i + 1] for i in range(big.ndim - 2))


def _folded(a, b):
    """The batch's rows as one matrix (the batch on the right is transposed to the left first)."""
    transpose = b.ndim > a.ndim
    big, small = (b.mT, a.t() if a.ndim == 2 else a) if transpose else (a, b)
    rows = big.reshape(math.prod(big.shape[:-1]), big.shape[-1])
    if small.ndim == 1:
        return UnsafeView.apply(mv(rows, small), big.shape[:-1])
    out = UnsafeView.apply(mm(rows, small), big.shape[:-1] + small.shape[1:])
    return out.mT.contiguous() if transpose else out


def _batched(a, b):
    """Both sides expanded to the broadcast batch, flattened to one batch dim, multiplied by bmm."""
    n, m1 = (a.shape[-2] if a.ndim > 1 else 1), a.shape[-1]
    m2, p = (b.shape[-2], b.shape[-1]) if b.ndim > 1 else (b.shape[0], 1)
    batch = _broadcast_batch(a.shape[:-2], b.shape[:-2])
    count = math.prod(batch)
    a3 = a.expand(*batch, n, m1).reshape(count, n, m1)
    if b.ndim == 1:  # a vector is not a batch of (m2, 1) matrices by broadcasting: made one here
        b3 = b.expand(*batch, m2).reshape(count, m2).unsqueeze(2)
    else:
        b3 = b.expand(*batch, m2, p).reshape(count, m2, p)
    out_shape = batch + ((n,) if a.ndim > 1 else ()) + ((p,) if b.ndim > 1 else ())
    out = bmm(a3, b3)
    return UnsafeView.apply(out.squeeze(-1) if b.ndim == 1 else out, out_shape)


def _broadcast_batch(shape_a, shape_b):
    """The broadcast of two batch shapes, with PyTorch's error where they do not broadcast."""
    check_broadcast(shape_a, shape_b)
    return tuple(np.broadcast_shapes(tuple(shape_a), tuple(shape_b)))


@register("dot")
def dot(a, other):
    check_device("_dot", ("self", a), ("tensor", other))
    if a.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {other.ndim}D tensors")
    if a._array.dtype != other._array.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {a.dtype.scalar_name} and "
                           f"{other.dtype.scalar_name}")
    if a.shape != other.shape:
        raise RuntimeError("inconsistent tensor size, expected tensor [%d] and src [%d] to have the same number "
                           "of elements, but got %d and %d elements respectively"
                           % (a.shape[0], other.shape[0], a.shape[0], other.shape[0]))
    return Dot.apply(a, other)


def _check_mm_dtype(a, b):
    if a._array.dtype != b._array.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a.dtype.cpp_name} != "
                           f"{b.dtype.cpp_name}")


def _check_mv_dtype(a, v):
    if a._array.dtype != v._array.dtype:  # (addmv's message names its result first, made with the vector's dtype)
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {v.dtype.scalar_name}, "
                           f"{a.dtype.scalar_name}, and {v.dtype.scalar_name}")


def _check_bmm_dtype(a, b):
    if a._array.dtype != b._array.dtype:
        raise RuntimeError(f"expected scalar type {a.dtype.scalar_name} but found {b.dtype.scalar_name}")


@register("mm")
def mm(a, other):
    if a.ndim != 2 or other.ndim != 2:
        raise RuntimeError(f"{'self' if a.ndim != 2 else 'mat2'} must be a matrix")
    check_device("mm", ("self", a), ("mat2", other))
    _check_mm_dtype(a, other)
    _check_inner(a, other, -2)
    return Mm.apply(a, other)


@register("mv")
def mv(a, vec):
    """Matrix times vector, with PyTorch's checks (its message counts the output's dimension first)."""
    if a.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, {vec.ndim}")
    _check_mv_sizes(a, vec)
    check_device("mv", ("self", a), ("vec", vec))
    _check_mv_dtype(a, vec)
    return Mv.apply(a, vec)


def _check_mv_sizes(a, v):
    if a.shape[1] != v.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), "
                           f"vec ({v.shape[0]})")


@register("bmm")
def bmm(a, other):
    if a.ndim != 3 or other.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if a.ndim != 3 else "batch2 must be a 3D tensor")
    check_device("bmm", ("self", a), ("mat2", other))
    _check_bmm_dtype(a, other)
    if other.shape[:2] != (a.shape[0], a.shape[2]):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, "
                           f"{a.shape[2]}] but got: [{other.shape[0]}, {other.shape[1]}].")
    return Bmm.apply(a, other)


def _check_inner(a, b, b_dim):
    """PyTorch's error when the inner sizes differ (compared on the arrays: no Size objects on every call)."""
    if a._array.shape[-1] != b._array.shape[b_dim]:
        rows = int(np.prod(a.shape[:-1]))
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{a.shape[-1]} and "
                           f"{b.shape[b_dim]}x{b.shape[-1] if b.ndim > 1 else 1})")


class Addmm(Function):
    """``bias + mat1 @ mat2`` in one node: F.linear on a batch, with mat2 = weight.t()."""
    node_name = "AddmmBackward0"
    saved_names = ("mat1", "mat2")

    @staticmethod
    def forward(ctx, bias, mat1, mat2):
        _, need_mat1, need_mat2 = ctx.needs_input_grad
        ctx.save_for_backward(mat1 if need_mat2 else None, mat2 if need_mat1 else None)
        ctx.mat2_column_major, ctx.bias_ndim = _column_major(mat2._array), bias.ndim
        out = mat1._array @ mat2._array
        out += bias._array
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        mat1, mat2 = ctx.saved_tensors
        need_bias, need_mat1, need_mat2 = ctx.needs_input_grad
        # a row of biases is summed here; the engine sums any other broadcast bias back to its shape
        bias_grad = (grad.sum(0) if ctx.bias_ndim == 1 else grad) if need_bias else None
        return bias_grad, grad @ _t(mat2) if need_mat1 else None, _mat2_grad(ctx, grad, mat1) if need_mat2 else None

    @staticmethod
    def jvp(ctx, t_bias, t_mat1, t_mat2):
        _, mat1, mat2 = ctx.primals
        return addmm(t_bias, t_mat1, mat2) + mat1 @ t_mat2


def addmm(bias, mat1, mat2):
    check_device("addmm", ("self", bias), ("mat1", mat1), ("mat2", mat2))
    for name, t in (("mat1", mat1), ("self", bias)):
        if t._array.dtype != mat2._array.dtype:  # (numpy's dtypes: cheaper than two Tensor.dtype lookups)
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {t.dtype.scalar_name} and "
                               f"{mat2.dtype.scalar_name}")
    _check_inner(mat1, mat2, -2)
    return Addmm.apply(bias, mat1, mat2)


def linear(x, weight, bias=None):
    """``x @ weight.t() + bias``, recorded as PyTorch's F.linear records it: addmm on the rows of x
    (viewed as 2-D when x is contiguous), else matmul then an in-place add of the bias."""
    weight_t = weight.t()
    if bias is not None and x.ndim == 2:
        return addmm(bias, x, weight_t)
    if bias is not None and x.is_contiguous() and (x.ndim == 3 or bias.ndim == 1):
        rows = x.reshape(math.prod(x.shape[:-1]), x.shape[-1])
        return addmm(bias, rows, weight_t).view(*x.shape[:-1], weight.shape[0])
    out = matmul(x, weight_t)
    return out if bias is None else out.add_(bias)
