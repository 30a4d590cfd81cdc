# Seed 000: how backward() works, graph freeing, higher-order gradients, accumulation.
import torch

x = torch.tensor(2.0, requires_grad=True)
y = torch.tensor(3.0, requires_grad=True)
# out = (x*y + x)^2 = (2*3 + 2)^2 = 64
z = x * y
w = z + x
out = w ** 2
print(f"out = {out.item()}")
out.backward()
print(f"x.grad = {x.grad}")
print(f"y.grad = {y.grad}")
print(x.grad, y.grad, out)

# Graph freeing: backward() can only be called once
x = torch.tensor(2.0, requires_grad=True)
out = x ** 3
out.backward()
print(f"x.grad = {x.grad}")
try:
    out.backward()
except RuntimeError as e:
    print(f"RuntimeError: {e}")

# Higher-order gradients
x = torch.tensor(3.0, requires_grad=True)
y = x ** 3
grad_x = torch.autograd.grad(y, x, create_graph=True)[0]
print(f"dy/dx = {grad_x.item()}")
grad_x2 = torch.autograd.grad(grad_x, x)[0]
print(f"d2y/dx2 = {grad_x2.item()}")
print(grad_x, grad_x2)

# Leaf gradients accumulate across backward() calls
x = torch.tensor(1.0, requires_grad=True)
for i in range(3):
    y = x * (i + 1)
    y.backward()
    print(f"After step {i}: x.grad = {x.grad}")
