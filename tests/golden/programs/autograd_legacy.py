# Code written for PyTorch before 0.4 still runs: Variable is a Tensor, volatile and only_inputs are ignored.
import torch
from torch.autograd import Variable
from golden_helpers import attempt

x = torch.ones(2)
v = Variable(x, requires_grad=True)
print(v, v is x, type(v).__name__, v.is_leaf, v.grad_fn)
print(isinstance(x, Variable), isinstance(v, Variable), isinstance(2.0, Variable))
print(Variable(x).requires_grad, Variable(x) is x)
print(Variable())
y = (v * 3).sum()
y.backward()
print(v.grad, x.grad)
with torch.no_grad():
    v.data.mul_(2)
print(x)
h = torch.ones(2, requires_grad=True) * 2
wrapped = Variable(h)
print(wrapped.requires_grad, wrapped.grad_fn, wrapped.is_leaf)
print(Variable(x, volatile=True).requires_grad)
attempt("list", lambda: Variable([1.0, 2.0]))
w = torch.tensor(2.0, requires_grad=True)
print(torch.autograd.grad(w * 3, w, only_inputs=True))
print(torch.autograd.grad(w * w, w, only_inputs=False))
