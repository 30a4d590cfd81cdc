"""torch.linalg's differentiable functions: gradients and gradients of gradients by central differences
in float64. What they print is compared with PyTorch's in the golden program ``linalg_with_gradients``."""
import pytest

import chibigrad as torch
from chibigrad.autograd import gradcheck, gradgradcheck


def _matrix(n, phase=0.0):
    a = torch.sin(torch.arange(n * n, dtype=torch.float64) * 0.9 + phase).reshape(n, n)
    return a + n * torch.eye(n, dtype=torch.float64)  # well conditioned


def _spd(x):
    return x @ x.mT + torch.eye(x.shape[-1], dtype=torch.float64)


@pytest.mark.parametrize("function", [
    torch.linalg.inv, torch.linalg.det, lambda a: torch.linalg.slogdet(a).logabsdet,
    lambda a: torch.linalg.solve(a, torch.arange(6.0, dtype=torch.float64).reshape(3, 2)),
    lambda a: torch.linalg.solve(a, a[0] * 2), lambda a: torch.linalg.solve(a, a[:2], left=False),
    lambda a: torch.linalg.cholesky(_spd(a)), lambda a: torch.linalg.cholesky(_spd(a), upper=True),
    lambda a: torch.linalg.norm(a), lambda a: torch.linalg.vector_norm(a, 3, dim=0),
])
def test_gradients_and_second_gradients(function):
    a = _matrix(3).requires_grad_()
    assert gradcheck(function, (a,))
    assert gradgradcheck(function, (a,))


def test_batched_inverse_and_solve():
    a = torch.stack([_matrix(3), _matrix(3, phase=1.0)]).requires_grad_()
    assert gradcheck(torch.linalg.inv, (a,))
    b = torch.ones(2, 3, 1, dtype=torch.float64, requires_grad=True)
    assert gradcheck(torch.linalg.solve, (a, b))


def test_what_chibigrad_lacks_says_so():
    with pytest.raises(AttributeError, match="chibigrad does not implement torch.linalg.svd"):
        torch.linalg.svd
    with pytest.raises(NotImplementedError, match="ord='fro'"):
        torch.linalg.matrix_norm(_matrix(2), ord="nuc")


@pytest.mark.parametrize("function", [
    torch.linalg.inv, torch.linalg.det, lambda a: torch.linalg.slogdet(a).logabsdet,
    lambda a: torch.linalg.solve(a, torch.arange(6.0, dtype=torch.float64).reshape(3, 2)),
    lambda a: torch.linalg.solve(a, a[0] * 2),
    lambda a: torch.linalg.cholesky(_spd(a)), lambda a: torch.linalg.cholesky(_spd(a), upper=True),
])
def test_forward_mode(function):
    a = _matrix(3).requires_grad_()
    assert gradcheck(function, (a,), check_forward_ad=True)
