# Seed 001: the autograd debugging checklist, each error triggered.
import torch
from golden_helpers import attempt


x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
attempt("non-scalar", lambda: (x * 2).backward())

y = (x ** 3).sum()
y.backward()
attempt("second time", lambda: y.backward())

a = x * 2
b = a.sin()
a.add_(1)
attempt("inplace", lambda: b.sum().backward())

p = torch.tensor([1.0, 2.0])
attempt("no grad_fn", lambda: (p * 2).sum().backward())

x.grad = None
a = x * 2
a = a + 1
a.sum().backward()
print(x.grad)
