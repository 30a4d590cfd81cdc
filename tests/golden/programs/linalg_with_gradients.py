# torch.linalg as Gaussian-process and least-squares code uses it: inv, det, slogdet, solve (matrix and vector
# right-hand sides), cholesky (lower and upper), the norms, gradients (also of gradients) and the errors.
import torch
A = torch.tensor([[4.0, 1.0, 0.5], [2.0, 3.0, -1.0], [0.0, 1.0, 2.0]], dtype=torch.float64, requires_grad=True)
B = torch.tensor([[1.0, 0.0], [2.0, 1.0], [-1.0, 3.0]], dtype=torch.float64, requires_grad=True)
v = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64, requires_grad=True)
inv = torch.linalg.inv(A)
print(inv, inv.grad_fn.name(), inv.grad_fn._saved_inverse.shape)
(inv.sum() * 2).backward(); print(A.grad); A.grad = None
d = torch.linalg.det(A); print(round(d.item(), 10), d.grad_fn.name()); d.backward(); print(A.grad); A.grad = None
print(round(torch.det(A).item(), 10), round(A.det().item(), 10), A.inverse().shape)
s = torch.linalg.slogdet(A); print(s); s.logabsdet.backward(); print(A.grad); A.grad = None
sign, logabsdet = torch.slogdet(-A); print(sign, logabsdet)
X = torch.linalg.solve(A, B); print(X, X.grad_fn.name()); (X ** 2).sum().backward(); print(A.grad, B.grad); A.grad = None; B.grad = None
x = torch.linalg.solve(A, v); print(x); x.sum().backward(); print(A.grad, v.grad); A.grad = None
M = A @ A.mT + torch.eye(3, dtype=torch.float64)
L = torch.linalg.cholesky(M); print(L, L.grad_fn.name(), L.grad_fn._saved_upper)
(L * torch.arange(9.0, dtype=torch.float64).reshape(3, 3)).sum().backward(); print(A.grad); A.grad = None
print(torch.linalg.cholesky(M, upper=True))
n = torch.linalg.norm(B); print(n, n.grad_fn.name()); print(torch.linalg.vector_norm(B, ord=3, dim=0), torch.linalg.matrix_norm(B), torch.linalg.norm(B, dim=1), torch.linalg.vector_norm(v, float('inf')))
g, = torch.autograd.grad(torch.linalg.det(A), A, create_graph=True)
g.sum().backward(); print((A.grad * 1e6).round() / 1e6); A.grad = None
for bad in [lambda: torch.linalg.inv(torch.zeros(2, 2)), lambda: torch.linalg.inv(torch.tensor([[1.0, 2.0], [2.0, 4.0]])),
            lambda: torch.linalg.cholesky(torch.tensor([[1.0, 2.0], [2.0, 1.0]])), lambda: torch.linalg.solve(A, torch.ones(2, 1, dtype=torch.float64)),
            lambda: torch.linalg.inv(torch.ones(2, 3)), lambda: torch.linalg.det(torch.ones(3)), lambda: torch.linalg.inv(torch.ones(2, 2, dtype=torch.int64))]:
    try:
        bad()
    except RuntimeError as e:
        print(type(e).__name__, isinstance(e, torch.linalg.LinAlgError), e)
