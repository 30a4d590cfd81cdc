"""Matrix products. Gradients of C = A @ B: dA = dC @ B^T, dB = A^T @ dC."""
import numpy as np

from ..autograd.function import Function
from ..tensor import wrap
from ._util import check_device, promoted, save_needed


class Mm(Function):
    node_name = "MmBackward0"
    array_backward = True

    @staticmethod
    def forward(ctx, a, b):
        save_needed(ctx, a, b)
        x, y = promoted(a, b)
        return wrap(x @ y)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return (grad @ b.mT if ctx.needs_input_grad[0] else None,
                a.mT @ grad if ctx.needs_input_grad[1] else None)


class Bmm(Mm):
    node_name = "BmmBackward0"


class Matmul(Mm):
    """Batched/broadcast products; the engine sums gradients over broadcast batch dims."""
    node_name = "UnsafeViewBackward0"


class Dot(Function):
    node_name = "DotBackward0"
    array_backward = True

    @staticmethod
    def forward(ctx, a, b):
        save_needed(ctx, a, b)
        x, y = promoted(a, b)
        return wrap(x @ y)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return (grad * b if ctx.needs_input_grad[0] else None,
                grad * a if ctx.needs_input_grad[1] else None)


class Mv(Function):
    node_name = "MvBackward0"

    @staticmethod
    def forward(ctx, a, v):
        save_needed(ctx, a, v)
        x, y = promoted(a, v)
        return wrap(x @ y)

    @staticmethod
    def backward(ctx, grad):
        a, v = ctx.saved_tensors
        return (grad.unsqueeze(1) * v if ctx.needs_input_grad[0] else None,
                a.mT @ grad if ctx.needs_input_grad[1] else None)


def matmul(a, b):
    """Dispatch on dimensions as torch.matmul does."""
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D")
    _check_matmul_device(a, b)
    if a.ndim == 1 and b.ndim == 1:
        if a.shape != b.shape:
            raise RuntimeError("inconsistent tensor size, expected tensor [%d] and src [%d] to have the same number "
                               "of elements, but got %d and %d elements respectively"
                               % (a.shape[0], b.shape[0], a.shape[0], b.shape[0]))
        return Dot.apply(a, b)
    if a.ndim == 2 and b.ndim == 1:
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), "
                               f"vec ({b.shape[0]})")
        return Mv.apply(a, b)
    if a.ndim == 1:
        from .shape import SqueezeMatmul
        return SqueezeMatmul.apply(matmul(a.unsqueeze(0), b), -2)
    if b.ndim == 1:
        return matmul(a, b.unsqueeze(-1)).squeeze(-1)
    _check_inner(a, b, -2)
    return Mm.apply(a, b) if a.ndim == 2 and b.ndim == 2 else Matmul.apply(a, b)


def _check_matmul_device(a, b):
    """Devices checked as by the kernel torch.matmul ends in, whose name the error quotes."""
    if a.ndim >= 3 and b.ndim >= 3:
        check_device("bmm", ("self", a), ("mat2", b))
    elif b.ndim >= 3:  # folded into one mm as (b^T a^T)^T
        check_device("mm", ("self", b), ("mat2", a))
    elif a.ndim == 1 and b.ndim == 1:
        check_device("_dot", ("self", a), ("tensor", b))
    elif a.ndim == 2 and b.ndim == 1:
        check_device("mv", ("self", a), ("vec", b))
    else:
        check_device("mm", ("self", a), ("mat2", b))


def mm(a, b):
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"{'self' if a.ndim != 2 else 'mat2'} must be a matrix")
    check_device("mm", ("self", a), ("mat2", b))
    _check_inner(a, b, -2)
    return Mm.apply(a, b)


def bmm(a, b):
    if a.ndim != 3 or b.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor" if a.ndim != 3 else "batch2 must be a 3D tensor")
    check_device("bmm", ("self", a), ("mat2", b))
    return Bmm.apply(a, b)


def _check_inner(a, b, b_dim):
    if a.shape[-1] != b.shape[b_dim]:
        rows = int(np.prod(a.shape[:-1]))
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{a.shape[-1]} and "
                           f"{b.shape[b_dim]}x{b.shape[-1] if b.ndim > 1 else 1})")


class Addmm(Function):
    """``bias + x @ weight.T`` in one node: nn.Linear's forward on a batch."""
    node_name = "AddmmBackward0"
    array_backward = True

    @staticmethod
    def forward(ctx, bias, x, weight):
        _, need_x, need_w = ctx.needs_input_grad
        ctx.save_for_backward(x if need_w else None, weight if need_x else None)
        out = x._array @ weight._array.T
        if bias is not None:
            out += bias._array
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        need_bias, need_x, need_w = ctx.needs_input_grad
        return (grad.sum(0) if need_bias else None,
                grad @ weight if need_x else None,
                grad.mT @ x if need_w else None)


def linear(x, weight, bias=None):
    """``x @ weight.T + bias`` (PyTorch's F.linear)."""
    if x._array.ndim == 2:
        check_device("addmm", ("self", bias), ("mat1", x), ("mat2", weight))
        if x._array.shape[1] != weight._array.shape[-1]:
            _check_inner(x, weight.mT, -2)  # raises PyTorch's message (weight.mT would be a recorded node)
        return Addmm.apply(bias, x, weight)
    out = matmul(x, weight.mT)
    return out if bias is None else out + bias
