# Saved tensors modified in place: PyTorch's version-counter error, for leaves and non-leaves.
import torch
from golden_helpers import attempt


x = torch.tensor([1., 2., 3.], requires_grad=True)
a = x * 2
b = a.sin()
a.add_(1)
attempt("3a", lambda: b.sum().backward())

x = torch.tensor([1., 2., 3.], requires_grad=True)
b = x.sin()
with torch.no_grad():
    x.add_(1)
attempt("3b", lambda: b.sum().backward())

x = torch.tensor([1., 2., 3.], requires_grad=True)
w = torch.tensor([4., 5., 6.])
y = x * w
w.mul_(2)
attempt("3c", lambda: y.sum().backward())

x = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
a = x * 2
b = a.exp()
b.add_(1)
attempt("3d", lambda: b.sum().backward())

x = torch.tensor(3., requires_grad=True)
a = x ** 2
b = a ** 2
a.mul_(2)
attempt("3e", lambda: b.backward())

x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
k = torch.tensor([[1, 2], [3, 4]])
y = x * k
k.add_(1)
attempt("3f", lambda: y.sum().backward())

x = torch.tensor([1., 2., 3., 4.], requires_grad=True)
a = x * 1
s = a[1:].sigmoid()
s.mul_(3)
attempt("3g", lambda: s.sum().backward())

x = torch.tensor([1., 2., 3.], requires_grad=True)
a = x * 2
b = a.sin()
with torch.no_grad():
    a.add_(1)
attempt("3h", lambda: b.sum().backward())

x = torch.tensor([1., 2., 3.], requires_grad=True)
a = x * 2
b = a.sin()
a.detach().add_(1)
attempt("3h detach", lambda: b.sum().backward())
print(a._version, x._version)

x = torch.tensor([1., 2.], requires_grad=True)
y = x ** 2
with torch.no_grad():
    x.mul_(2)
print(x._version)
attempt("17e", lambda: y.sum().backward())

x = torch.tensor([1., 2.], requires_grad=True)
y = x.exp()
d = y.detach()
d.zero_()
attempt("13h2", lambda: y.sum().backward())

x = torch.tensor([1., 2., 3.], requires_grad=True)
a = x * 2
b = a.sin()
a.mul_(3)
a.add_(1)
attempt("twice", lambda: b.sum().backward())

x = torch.tensor([1., 2., 3.], requires_grad=True)
a = x + 0
c = a * 5
a.add_(1)
attempt("add saves nothing", lambda: c.sum().backward())
print(x.grad)
