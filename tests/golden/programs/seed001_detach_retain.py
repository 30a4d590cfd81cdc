# Seed 001: detach, retain_graph, stop-gradient patterns (literal values instead of randn).
import torch

x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = x * 2
z = y.detach()
print(z.requires_grad, z, z.grad_fn, z.is_leaf)

x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = (x ** 2).sum()
y.backward(retain_graph=True)
print(x.grad)
y.backward()
print(x.grad)

# straight-through estimator
y_soft = torch.tensor([0.2, 0.7, 0.55], requires_grad=True)
y_hard = y_soft.detach() + (y_soft.round() - y_soft).detach()
print(y_hard, y_hard.requires_grad)
y_st = y_soft + (y_soft.round() - y_soft).detach()
y_st.sum().backward()
print(y_st, y_soft.grad)

# gradient penalty input
a = torch.tensor(0.25)
real = torch.tensor([1.0, 2.0])
fake = torch.tensor([3.0, -1.0])
x_interp = (a * real + (1 - a) * fake).detach().requires_grad_(True)
print(x_interp, x_interp.is_leaf)
(x_interp ** 2).sum().backward()
print(x_interp.grad)
