# Seed 002: leaf vs non-leaf tensors, retain_grad and the non-leaf .grad warning.
import torch

x = torch.tensor([2.0], requires_grad=True)
y = 2 * x + 5.0
L = y + x
L.backward()
print(x.grad)

w = torch.tensor([1.0], requires_grad=True)
print(w)
x = w * 2.0
print(x)
x.retain_grad()
print(x)
y = x + 1
print(y)
y.backward()
print(w.grad)
print(x.grad)
print(x.retains_grad, y.retains_grad, w.retains_grad)

a = torch.tensor([1.0], requires_grad=True)
b = a * 2.0
c = b + 1
c.backward()
print(a.grad)
print(b.grad)
print(a.is_leaf, b.is_leaf, c.is_leaf)
