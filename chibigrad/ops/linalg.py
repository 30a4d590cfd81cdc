"""Matrix products (gradients of C = A @ B: dA = dC @ B^T, dB = A^T @ dC), and the torch.linalg functions
with gradients: inverse, determinant, solve, Cholesky."""
import math

import numpy as np

from ..autograd.function import Function
from .. import return_types
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


# ---- torch.linalg: inverse, determinant, solve, Cholesky (chibigrad/linalg.py names them) ----------
class _LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError`` (PyTorch's class is named ``_LinAlgError`` too): no inverse, no Cholesky factor."""


LinAlgError = _LinAlgError


def _check_square(name, a):
    if a.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {a.shape[-2]} by "
                           f"{a.shape[-1]} matrices")
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {a.dtype.scalar_name}")


def _zero_pivot(matrix):
    """LAPACK's answer to 'which diagonal element of U is zero' (1-based), by LU with partial pivoting."""
    u = np.array(matrix, dtype=np.float64)
    for k in range(u.shape[0]):
        pivot = k + np.argmax(np.abs(u[k:, k]))
        u[[k, pivot]] = u[[pivot, k]]
        if u[k, k] == 0:
            return k + 1
        u[k + 1:] -= np.outer(u[k + 1:, k] / u[k, k], u[k])
    return u.shape[0]


class Inv(Function):
    """A^-1; its gradient is -A^-T grad A^-T (saved: the inverse itself)."""
    node_name = "LinalgInvExBackward0"
    saved_names = ("inverse",)

    @staticmethod
    def forward(ctx, a):
        x = a._array
        singular = np.linalg.det(x) == 0 if x.ndim == 2 else False
        try:
            out = wrap(np.linalg.inv(x))
        except np.linalg.LinAlgError:
            singular = True
        if singular:
            raise LinAlgError(f"linalg.inv: The diagonal element {_zero_pivot(x)} is zero, the inversion could not "
                              "be completed because the input matrix is singular.")
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        inverse, = ctx.saved_tensors
        return -(inverse.mT @ grad @ inverse.mT)

    @staticmethod
    def jvp(ctx, ta):
        return -(ctx.result @ ta @ ctx.result)


@register("inverse")
def inverse(a):
    _check_square("linalg.inv", a)
    return Inv.apply(a)


class Det(Function):
    """det A; its gradient is grad * det A * A^-T (A must be invertible here; PyTorch also handles singular A)."""
    node_name = "LinalgDetBackward0"
    saved_names = ("A", "result")

    @staticmethod
    def forward(ctx, a):
        out = wrap(np.asarray(np.linalg.det(a._array), dtype=a._array.dtype))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, det = ctx.saved_tensors
        if bool((det == 0).any()):
            raise NotImplementedError("chibigrad's det backward needs an invertible matrix (PyTorch's goes through "
                                      "an SVD for singular ones)")
        return (grad * det)[..., None, None] * inverse(a).mT

    @staticmethod
    def jvp(ctx, ta):
        return ctx.result * _trace_of_solve(ctx.primals[0], ta)  # d det A = det A tr(A^-1 dA)


@register("det")
def det(a):
    _check_square("linalg.det", a)
    return Det.apply(a)


class Slogdet(Function):
    """(sign, log|det A|); only log|det A| has a gradient: grad * A^-T."""
    node_name = "LinalgSlogdetBackward0"
    saved_names = ("A", "sign")

    @staticmethod
    def forward(ctx, a):
        sign, logabsdet = np.linalg.slogdet(a._array)
        sign, logabsdet = wrap(np.asarray(sign, a._array.dtype)), wrap(np.asarray(logabsdet, a._array.dtype))
        ctx.save_for_backward(a, sign)
        return sign, logabsdet  # sign has a grad_fn too, as in PyTorch, but never a gradient

    @staticmethod
    def backward(ctx, _, grad):
        a, _ = ctx.saved_tensors
        return grad[..., None, None] * inverse(a).mT

    @staticmethod
    def jvp(ctx, ta):
        sign, _ = ctx.result
        return sign * 0, _trace_of_solve(ctx.primals[0], ta)


def _trace_of_solve(a, ta):
    """tr(A^-1 dA): the sum of A^-1 times dA transposed, element by element."""
    return (inverse(a) * ta.mT).sum((-2, -1))


@register("slogdet")
def slogdet(a):
    _check_square("linalg.slogdet", a)
    return return_types.linalg_slogdet(*Slogdet.apply(a))


class Solve(Function):
    """X with A X = B; gradients: grad_B = A^-T grad, grad_A = -grad_B X^T (B a matrix or a vector)."""
    node_name = "LinalgSolveExBackward0"
    saved_names = ("A", "result")

    @staticmethod
    def forward(ctx, a, b):
        ctx.vector = b.ndim == a.ndim - 1
        rhs = b._array[..., None] if ctx.vector else b._array
        out = wrap(np.linalg.solve(a._array, rhs)[..., 0] if ctx.vector else np.linalg.solve(a._array, rhs))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        if ctx.vector:
            grad_b = solve(a.mT, grad)
            return -(grad_b[..., :, None] * x[..., None, :]), grad_b
        grad_b = solve(a.mT, grad)
        return -(grad_b @ x.mT), grad_b

    @staticmethod
    def jvp(ctx, ta, tb):
        a, x = ctx.primals[0], ctx.result
        if ctx.vector:
            return solve(a, tb - (ta @ x[..., None])[..., 0])  # dX = A^-1 (dB - dA X)
        return solve(a, tb - ta @ x)


def solve(a, b, *, left=True):
    _check_square("linalg.solve", a)
    if not left:
        return solve(a.mT, b.mT).mT
    vector = b.ndim == a.ndim - 1
    if b.shape[-1 if vector else -2] != a.shape[-1]:
        b_shape = f"{b.shape[-1]}x1" if vector else f"{b.shape[-2]}x{b.shape[-1]}"
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({a.shape[-2]}x{a.shape[-1]} and {b_shape})")
    return Solve.apply(a, b)


class Cholesky(Function):
    """L with A = L L^T (or U = L^T with ``upper``). Backward (PyTorch's cholesky_backward, after Murray
    2016, real case): P = tril(L^T grad), made symmetric with its diagonal halved, grad_A = L^-T P L^-1."""
    node_name = "LinalgCholeskyExBackward0"
    saved_names = ("L",)
    saved_values = ("upper",)

    @staticmethod
    def forward(ctx, a, upper):
        ctx.upper = upper
        try:
            low = np.linalg.cholesky(a._array)
        except np.linalg.LinAlgError:
            raise LinAlgError("linalg.cholesky: The factorization could not be completed because the input is not "
                              f"positive-definite (the leading minor of order {_first_bad_minor(a._array)} is not "
                              "positive-definite).") from None
        out = wrap(np.ascontiguousarray(np.swapaxes(low, -1, -2)) if upper else low)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        low, = ctx.saved_tensors
        if ctx.upper:
            low, grad = low.mT, grad.mT
        p = (low.mT @ grad).tril()
        p = 0.5 * (p + p.tril(-1).mT)
        low_inv = inverse(low)
        return low_inv.mT @ p @ low_inv, None

    @staticmethod
    def jvp(ctx, ta, _):
        """dL = L phi(L^-1 dA L^-T), phi: the lower triangle with its diagonal halved."""
        low = ctx.result.mT if ctx.upper else ctx.result
        low_inv = inverse(low)
        inner = low_inv @ ta @ low_inv.mT
        half_diagonal = 1 - 0.5 * wrap(np.eye(low.shape[-1], dtype=low._array.dtype))
        tangent = low @ (inner.tril() * half_diagonal)
        return tangent.mT if ctx.upper else tangent


def _first_bad_minor(matrix):
    for k in range(1, matrix.shape[-1] + 1):
        try:
            np.linalg.cholesky(matrix[..., :k, :k])
        except np.linalg.LinAlgError:
            return k
    return matrix.shape[-1]


def cholesky(a, *, upper=False):
    _check_square("linalg.cholesky", a)
    return Cholesky.apply(a, upper)


class SolveTriangular(Function):
    """X with A X = B, A triangular (only its ``upper`` or lower triangle is read). Gradients, as in
    PyTorch: grad_B = A^-T grad (a triangular solve again), grad_A = -grad_B X^T in A's triangle."""
    node_name = "LinalgSolveTriangularBackward0"
    saved_names = ("self", "result")
    saved_values = ("upper",)

    @staticmethod
    def forward(ctx, a, b, upper, unitriangular):
        ctx.upper, ctx.unitriangular = upper, unitriangular
        tri = _triangle(a._array, upper, unitriangular)
        out = wrap(np.linalg.solve(tri, b._array))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        grad_b = SolveTriangular.apply(a.mT, grad, not ctx.upper, ctx.unitriangular)
        grad_a = None
        if ctx.needs_input_grad[0]:
            grad_a = -(grad_b @ x.mT)
            grad_a = grad_a.triu(int(ctx.unitriangular)) if ctx.upper else grad_a.tril(-int(ctx.unitriangular))
        return grad_a, grad_b, None, None

    @staticmethod
    def jvp(ctx, ta, tb):
        a, x = ctx.primals[0], ctx.result
        ta = ta.triu(int(ctx.unitriangular)) if ctx.upper else ta.tril(-int(ctx.unitriangular))
        return SolveTriangular.apply(a, tb - ta @ x, ctx.upper, ctx.unitriangular)  # dX = A^-1 (dB - dA X)


def _triangle(a, upper, unitriangular):
    """The triangle of ``a`` a triangular solve reads (ones on the diagonal if ``unitriangular``)."""
    tri = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        tri = tri - np.triu(np.tril(tri)) + np.eye(a.shape[-1], dtype=a.dtype)
    return tri


def solve_triangular(a, b, *, upper, left=True, unitriangular=False):
    """``torch.linalg.solve_triangular``: A X = B (or X A = B with ``left=False``)."""
    _check_square("linalg.solve_triangular", a)
    if not left:
        return solve_triangular(a.mT, b.mT, upper=not upper, unitriangular=unitriangular).mT
    if b.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    return SolveTriangular.apply(a, b, upper, unitriangular)


class CholeskySolve(Function):
    """X with (L L^T) X = B, given the Cholesky factor L (``upper``: U with U^T U). Backward is
    PyTorch's cholesky_solve_backward: grad_B = cholesky_solve(grad, L), and from the symmetric
    C = grad_B X^T + X grad_B^T, grad_L = -C L (upper: -U C)."""
    node_name = "CholeskySolveBackward0"
    saved_names = ("input2", "result")
    saved_values = ("upper",)

    @staticmethod
    def forward(ctx, b, low, upper):
        ctx.upper = upper
        factor = low._array
        full = np.swapaxes(factor, -1, -2) @ factor if upper else factor @ np.swapaxes(factor, -1, -2)
        out = wrap(np.linalg.solve(full, b._array))
        ctx.save_for_backward(low, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        low, x = ctx.saved_tensors
        grad_b = CholeskySolve.apply(grad, low, ctx.upper)
        common = grad_b @ x.mT
        common = common + common.mT
        grad_low = -(low @ common) if ctx.upper else -(common @ low)
        return grad_b, grad_low, None

    @staticmethod
    def jvp(ctx, tb, tl, _):
        """dX = A^-1 (dB - dA X), with dA = dL L^T + L dL^T (upper: dU^T U + U^T dU)."""
        low, x = ctx.primals[1], ctx.result
        d_a = tl.mT @ low + low.mT @ tl if ctx.upper else tl @ low.mT + low @ tl.mT
        return CholeskySolve.apply(tb - d_a @ x, low, ctx.upper)


@register("cholesky_solve")
def cholesky_solve(b, low, upper=False):
    """Solve A X = B where A = L L^T and ``low`` is L, as Gaussian-process code does after a Cholesky."""
    if b.ndim < 2 or low.ndim < 2:
        raise RuntimeError("b should have at least 2 dimensions, but has " f"{b.ndim} dimensions instead"
                           if b.ndim < 2 else
                           f"u should have at least 2 dimensions, but has {low.ndim} dimensions instead")
    return CholeskySolve.apply(b, low, upper)
