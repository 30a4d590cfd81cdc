# Seed 003: requires_grad contagion, grad_fn of leaves and results, is_leaf,
# non-scalar backward and the two ways around it (random values: only structure is printed).
import torch

t1 = torch.randn((3, 3), requires_grad=True)
t2 = torch.zeros(3, 3)
t2.requires_grad = True
print(t1.requires_grad, t2.requires_grad, t2)

a = torch.randn((3, 3), requires_grad=True)
w1 = torch.randn((3, 3), requires_grad=True)
w2 = torch.randn((3, 3), requires_grad=True)
w3 = torch.randn((3, 3), requires_grad=True)
w4 = torch.randn((3, 3), requires_grad=True)
b = w1 * a
c = w2 * a
d = w3 * b + w4 * c
L = 10 - d
print("The grad fn for a is", a.grad_fn)
print("The grad fn for d is", d.grad_fn)
print("The grad fn for L is", L.grad_fn)
print(a.is_leaf, d.is_leaf, L.is_leaf)
try:
    L.backward()
except RuntimeError as e:
    print("RuntimeError:", e)
L = (10 - d).sum()
L.backward()
print(a.grad.shape, w1.grad.shape, w4.grad.dtype)
print(torch.allclose(a.grad, -(w3 * w1 + w4 * w2).detach()))

for t in (a, w1, w2, w3, w4):
    t.grad = None
L = 10 - d
d2 = w3 * (w1 * a) + w4 * (w2 * a)
(10 - d2).backward(torch.ones(3, 3))
print(torch.allclose(a.grad, -(w3 * w1 + w4 * w2).detach()))
print(b.requires_grad, (b.detach() * 2).requires_grad, torch.zeros(2).requires_grad)
