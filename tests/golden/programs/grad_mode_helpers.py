# Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled.
import torch

print(torch.is_grad_enabled())
with torch.no_grad():
    print(torch.is_grad_enabled())
    with torch.enable_grad():
        print(torch.is_grad_enabled())
    print(torch.is_grad_enabled())
print(torch.is_grad_enabled())
torch.set_grad_enabled(False)
print(torch.is_grad_enabled())
torch.set_grad_enabled(True)
print(torch.is_grad_enabled())
with torch.set_grad_enabled(False):
    print(torch.is_grad_enabled())
print(torch.is_grad_enabled())


@torch.no_grad()
def f(x):
    return x * 2


@torch.enable_grad()
def g(x):
    return x * 2


x = torch.ones(1, requires_grad=True)
print(f(x), f(x).requires_grad)
with torch.no_grad():
    print(g(x), torch.is_grad_enabled())

x = torch.tensor([1., 2.], requires_grad=True)
y = (x * 2).sum()
with torch.no_grad():
    y.backward()
print(x.grad)
with torch.no_grad():
    z = x * 2
print(z.requires_grad, z.grad_fn, z.is_leaf, z)

with torch.inference_mode():
    t = torch.ones(2)
    u = torch.ones(2, requires_grad=True) * 2
    print(torch.is_inference_mode_enabled(), torch.is_grad_enabled())
print(torch.is_inference_mode_enabled())
print(t, t.is_inference(), t.requires_grad)
print(u, u.requires_grad, u.grad_fn, u.is_inference())
w = torch.ones(2, requires_grad=True)
(t + w).sum().backward()
print(w.grad)
try:
    t.add_(1)
except RuntimeError as e:
    print(e)
try:
    u.sum().backward()
except RuntimeError as e:
    print(e)
with torch.inference_mode(False):
    print(torch.is_inference_mode_enabled())
