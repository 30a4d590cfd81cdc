# Follows micrograd's test_engine.py (test_sanity_check, test_more_ops), which checks micrograd
# against PyTorch with exactly this torch code on double scalars, and micrograd's README example.
import torch

x = torch.Tensor([-4.0]).double()
x.requires_grad = True
z = 2 * x + 2 + x
q = z.relu() + z * x
h = (z * z).relu()
y = h + q + q * x
y.backward()
xpt, ypt = x, y
print(ypt.data.item(), xpt.grad.item())
print(y.grad_fn, z.grad_fn.next_functions)

a = torch.Tensor([-4.0]).double()
b = torch.Tensor([2.0]).double()
a.requires_grad = True
b.requires_grad = True
c = a + b
d = a * b + b**3
c = c + c + 1
c = c + 1 + c + (-a)
d = d + d * 2 + (b + a).relu()
d = d + 3 * d + (b - a).relu()
e = c - d
f = e**2
g = f / 2.0
g = g + 10.0 / f
g.backward()
apt, bpt, gpt = a, b, g
print(f'{gpt.data.item():.4f}')
print(f'{apt.grad.item():.4f}')
print(f'{bpt.grad.item():.4f}')
tol = 1e-6
print(abs(gpt.data.item() - 24.70408163265306) < tol, abs(apt.grad.item() - 138.83381924198252) < tol,
      abs(bpt.grad.item() - 645.5772594752186) < tol)

# the neuron from the "spelled-out intro to backpropagation" lecture, checked with torch
x1 = torch.Tensor([2.0]).double(); x1.requires_grad = True
x2 = torch.Tensor([0.0]).double(); x2.requires_grad = True
w1 = torch.Tensor([-3.0]).double(); w1.requires_grad = True
w2 = torch.Tensor([1.0]).double(); w2.requires_grad = True
b = torch.Tensor([6.8813735870195432]).double(); b.requires_grad = True
n = x1 * w1 + x2 * w2 + b
o = torch.tanh(n)
print(o.data.item())
o.backward()
print('---')
print('x2', x2.grad.item())
print('w2', w2.grad.item())
print('x1', x1.grad.item())
print('w1', w1.grad.item())
print(x1.dtype, o.grad_fn, torch.Tensor([1, 2]).dtype, torch.Tensor(2, 3).shape)
