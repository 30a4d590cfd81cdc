# retain_grad / retains_grad and the UserWarning for .grad of a non-leaf.
import torch
from golden_helpers import attempt


x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
y.sum().backward()
print(y.grad)
print(y.retains_grad, x.retains_grad)

x = torch.tensor([1., 2.], requires_grad=True)
y = x * 2
y.retain_grad()
y.retain_grad()
z = y * y
z.retain_grad()
z.sum().backward()
print(y.grad, y.is_leaf, y.retains_grad, z.grad, x.grad)
print(torch.tensor([1.]).grad)

x = torch.tensor([1., 2.], requires_grad=True)
x.retain_grad()
print(x.retains_grad)
(x * 2).sum().backward()
print(x.grad)
attempt("13a", lambda: torch.tensor([1., 2.]).retain_grad())

y = x * 2
print(y.requires_grad_(True) is y)
attempt("13b", lambda: y.requires_grad_(False))


def set_rg(t, v):
    t.requires_grad = v


attempt("13d", lambda: set_rg(y, False))
attempt("13c tensor", lambda: torch.tensor([1, 2], requires_grad=True))
attempt("13c requires_grad_", lambda: torch.tensor([1, 2]).requires_grad_())
attempt("13c attr", lambda: set_rg(torch.tensor([1, 2]), True))
attempt("13c ones", lambda: torch.ones(2, dtype=torch.int64, requires_grad=True))
attempt("13c arange", lambda: torch.arange(3, requires_grad=True))

# retained gradient accumulates over two backward passes
x = torch.tensor([1., 2.], requires_grad=True)
y = x * 3
y.retain_grad()
s = (y * y).sum()
s.backward(retain_graph=True)
s.backward()
print(y.grad, x.grad)
