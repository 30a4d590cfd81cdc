# Seed 004: retain_graph for several backward passes, zeroing, detach.
import torch

x = torch.randn(10, requires_grad=True)
y = x * 2
z = y.sum()
z.backward(retain_graph=True)
print(x.grad)
z.backward(retain_graph=True)
print(x.grad)
del x, y, z

x = torch.tensor([0.5], requires_grad=True)
y = x ** 2
z = y ** 2
z.backward(retain_graph=True)
print("First-order gradient:", x.grad)
x.grad.zero_()
print(x.grad)
y.backward(retain_graph=True)
print("Second-order gradient:", x.grad)

x = torch.randn(5, requires_grad=True)
y = x * 2
z = y.sum()
w = z.detach() + 1
z.backward(retain_graph=True)
print("Gradient of z:", x.grad)
x.grad.zero_()
print(x.grad)
w.backward()
