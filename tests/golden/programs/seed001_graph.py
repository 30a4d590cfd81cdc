# Seed 001: computational graphs (random values, only structure is printed).
import torch

x = torch.randn(3, requires_grad=True)
w = torch.randn(3, requires_grad=True)
y = x * w
z = y.sum()
print(z.grad_fn)
print(z.grad_fn.next_functions)
print(z.grad_fn.next_functions[0][0].next_functions)
print(x.grad_fn)
print(x.is_leaf)
print(y.is_leaf)
print(z.shape, z.dtype, y.requires_grad, x.requires_grad)
