# Seed 001: backward() on scalars and vectors, and gradient accumulation.
import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x ** 2).sum()
y.backward()
print(x.grad)

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x ** 2
try:
    y.backward()
except RuntimeError as e:
    print("ERROR:", e)
y.backward(torch.ones_like(y))
print(x.grad)

x = torch.tensor([1.0], requires_grad=True)
y = (x ** 2).sum()
y.backward()
print(x.grad)
y = (x ** 2).sum()
y.backward()
print(x.grad)
x.grad = None
print(x.grad)
