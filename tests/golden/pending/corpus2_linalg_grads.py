# torch.linalg by example, after PyTorch's torch.linalg documentation examples
# (https://pytorch.org/docs/stable/linalg.html: solve, inv, det, slogdet, eigh, svd, qr, norm, matrix_norm) with
# gradients as a least-squares / log-det user would take them; gradcheck in float64 as the autograd docs do.
import torch
from torch.autograd import gradcheck

A = torch.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], dtype=torch.float64, requires_grad=True)
b = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
x = torch.linalg.solve(A, b)
print(x)
print(torch.allclose(A @ x, b))
x.sum().backward()
print(A.grad)
A.grad = None
print(torch.linalg.inv(A))
print(torch.linalg.det(A))
sign, logabsdet = torch.linalg.slogdet(A)
print(sign, logabsdet)
logabsdet.backward()
print(A.grad)
print(torch.allclose(A.grad, torch.linalg.inv(A).T))
L, Q = torch.linalg.eigh(A)
print(L)
print(torch.dist(Q @ torch.diag(L) @ Q.mT, A))
U, S, Vh = torch.linalg.svd(A.detach() + 0.1 * torch.arange(9.0, dtype=torch.float64).reshape(3, 3), full_matrices=False)
print(S)
Qr, R = torch.linalg.qr(A.detach())
print(R.diagonal().abs())
print(torch.linalg.norm(A), torch.linalg.matrix_norm(A, ord='fro'), torch.linalg.vector_norm(b, ord=1))
print(torch.linalg.norm(A, ord=2))
print(gradcheck(torch.linalg.solve, (A, b.unsqueeze(-1).requires_grad_())))
print(gradcheck(lambda M: torch.linalg.eigh(M @ M.mT)[0], (A,)))
print(gradcheck(torch.linalg.det, (A,)))
