"""torch.linalg: norms, and the inverse, determinant, solve, triangular solve and Cholesky factor with their
gradients.

The differentiable ones are ops like any other (chibigrad/ops/linalg.py: each Function's
backward is written with tensor ops, so gradients of gradients work too). What chibigrad
lacks here (eigen and singular value decompositions, QR, least squares, ...) raises an
AttributeError that says so.
"""
from .ops.linalg import LinAlgError, cholesky, det, inverse as inv, slogdet, solve, solve_triangular
from .ops.reduction import Norm


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The ``ord``-norm of ``x`` (flattened, or over ``dim``): 2, inf or any p > 0."""
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{x.dtype.scalar_name}")
    if ord in (0, -float("inf")) or ord < 0:
        raise NotImplementedError(f"chibigrad's linalg.vector_norm has ord=2, inf and p > 0, not ord={ord}")
    x = x if dtype is None else x.to(dtype)
    return Norm.apply(x, ord, dim, keepdim)


def matrix_norm(a, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The Frobenius norm over the two dims (PyTorch computes it as a vector norm, as here)."""
    if ord != "fro":
        raise NotImplementedError(f"chibigrad's linalg.matrix_norm has only ord='fro', not ord={ord!r} (those need "
                                  "singular values)")
    return vector_norm(a, 2, dim, keepdim, dtype=dtype)


def norm(a, ord=None, dim=None, keepdim=False, *, dtype=None):
    """``ord=None``: the 2-norm of the flattened tensor (or over ``dim``); a string or two dims: a matrix norm."""
    if isinstance(ord, str) or (ord is not None and dim is not None and len(tuple(dim)) == 2):
        return matrix_norm(a, ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    return vector_norm(a, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


from . import _missing  # noqa: E402

__getattr__ = _missing.module_getattr(__name__, "torch.linalg")
