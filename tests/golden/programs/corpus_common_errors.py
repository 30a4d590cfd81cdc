# Follows the errors autograd users ask about most on forums (and the messages they paste): backward
# twice, in-place on a leaf, a saved tensor modified in place, .numpy() on a tensor that requires grad,
# no grad_fn, dtype/shape mismatches in a loss, .grad of a non-leaf, and the usual fixes.
import torch
import torch.nn as nn
from golden_helpers import attempt

x = torch.tensor([1.0, 2.0], requires_grad=True)
y = (x * x).sum()
y.backward()
attempt("backward twice", lambda: y.backward())
y = (x * x).sum()
y.backward(retain_graph=True)
y.backward()
print("fix: retain_graph=True", x.grad)


def leaf_inplace():
    x += 1


attempt("leaf in-place", leaf_inplace)
with torch.no_grad():
    x += 1
print("fix: no_grad", x)

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a.sigmoid()
c = b * 2
b.mul_(3)
attempt("modified saved", lambda: c.sum().backward())
attempt("modified saved 2", lambda: b.sum().backward())
a2 = torch.tensor([0.5, 1.0], requires_grad=True)
e = a2.exp()
f = e * 2
e.add_(1)
attempt("exp result modified", lambda: f.sum().backward())

attempt("numpy", lambda: a.numpy())
print("fix: detach", a.detach().numpy())
attempt("no grad_fn", lambda: torch.ones(2).sum().backward())
attempt("int requires grad", lambda: torch.tensor([1, 2], requires_grad=True))
attempt("requires_grad_ on int", lambda: torch.arange(3).requires_grad_())

h = a * 2
print(h.is_leaf, h.grad)
print(a.is_leaf, a.grad_fn)

criterion = nn.CrossEntropyLoss()
logits = torch.tensor([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]], requires_grad=True)
attempt("float targets", lambda: criterion(logits, torch.tensor([1.0, 2.0])))
attempt("target shape", lambda: criterion(logits, torch.tensor([[1], [2]])))
attempt("target out of range", lambda: criterion(logits, torch.tensor([1, 3])))
print(criterion(logits, torch.tensor([1, 2])))
mse = nn.MSELoss()
attempt("dtype mismatch", lambda: nn.Linear(2, 1)(torch.tensor([[1.0, 2.0]], dtype=torch.float64)))
attempt("int input to linear", lambda: nn.Linear(2, 1)(torch.tensor([[1, 2]])))
print(mse(torch.tensor([1.0, 2.0]), torch.tensor([1.5, 2.5])))
attempt("mm shapes", lambda: torch.ones(2, 3) @ torch.ones(2, 3))
attempt("view non-contiguous", lambda: torch.ones(2, 3).t().view(6))
print(torch.ones(2, 3).t().reshape(6).shape, torch.ones(2, 3).t().contiguous().view(6).shape)
attempt("item of many", lambda: torch.tensor([1.0, 2.0]).item())
attempt("bool of many", lambda: bool(torch.tensor([1.0, 2.0]) > 0))
attempt("grad of non-scalar", lambda: torch.autograd.grad(a * 2, a))
attempt("grad with no requires", lambda: torch.autograd.grad(torch.ones(1).sum(), torch.ones(1)))
