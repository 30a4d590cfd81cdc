# Tensor hooks: register_hook (may replace the gradient), handle.remove(), post-accumulate hooks.
import torch

x = torch.tensor([1., 2., 3.], requires_grad=True)
h = x.register_hook(lambda g: g * 10)
(x * 2).sum().backward()
print(x.grad)
h.remove()
x.grad = None
(x * 2).sum().backward()
print(x.grad)

x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * 2
seen = []
y.register_hook(lambda g: seen.append(g.clone()))
hy = y.register_hook(lambda g: g + 1)
(y * y).sum().backward()
print(seen, x.grad)
hy.remove()

x = torch.tensor([1., 2.], requires_grad=True)
calls = []


def post(t):
    calls.append(t.grad.clone())


x.register_post_accumulate_grad_hook(post)
(x * 3).sum().backward()
(x * 3).sum().backward()
print(calls, x.grad)

try:
    torch.tensor([1., 2.]).register_hook(lambda g: g)
except RuntimeError as e:
    print(e)

x = torch.tensor(2., requires_grad=True)
y = x ** 2
y.register_hook(lambda g: print("hook on y got", g))
y.retain_grad()
y.register_hook(lambda g: g * 0)
y.backward()
print(x.grad, y.grad)

x = torch.ones(2, requires_grad=True)
x.register_hook(lambda g: g.double())  # a hook may not change the gradient's type
try:
    (x * 2).sum().backward()
except RuntimeError as e:
    print(e)
