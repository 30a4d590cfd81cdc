"""torch.linalg's differentiable functions: gradients and gradients of gradients by central differences
in float64. What they print is compared with PyTorch's in the golden program ``linalg_with_gradients``."""
import numpy as np
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


def test_solve_triangular_and_cholesky_solve_solve_and_their_gradients_check():
    a = torch.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], dtype=torch.float64)
    low = torch.linalg.cholesky(a).requires_grad_()
    b = torch.tensor([[1.0, 0.0], [2.0, -1.0], [0.5, 3.0]], dtype=torch.float64, requires_grad=True)
    np.testing.assert_allclose(torch.cholesky_solve(b, low).detach().numpy(),
                               np.linalg.solve(a.numpy(), b.detach().numpy()), rtol=1e-12)
    np.testing.assert_allclose(torch.cholesky_solve(b, low.mT, upper=True).detach().numpy(),
                               np.linalg.solve(a.numpy(), b.detach().numpy()), rtol=1e-12)
    x = torch.linalg.solve_triangular(low, b, upper=False)
    np.testing.assert_allclose((low @ x).detach().numpy(), b.detach().numpy(), rtol=1e-12)
    assert torch.autograd.gradcheck(lambda l_, b_: torch.cholesky_solve(b_, l_.tril()), (low, b))
    assert torch.autograd.gradgradcheck(lambda l_, b_: torch.cholesky_solve(b_, l_.tril()), (low, b))
    assert torch.autograd.gradcheck(lambda l_, b_: torch.linalg.solve_triangular(l_, b_, upper=False), (low, b))
    assert torch.autograd.gradcheck(lambda u, b_: torch.linalg.solve_triangular(u, b_.mT, upper=True, left=False),
                                    (low.mT.detach().requires_grad_(), b))
