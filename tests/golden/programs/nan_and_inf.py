# Out-of-domain inputs give nan / inf silently, in values and in gradients (no numpy warnings).
import torch

x = torch.tensor([-1., 0., 4.], requires_grad=True)
ops = {
    "log": lambda t: t.log(), "sqrt": lambda t: t.sqrt(), "x ** 0.5": lambda t: t ** 0.5,
    "1 / x": lambda t: 1 / t, "x / x": lambda t: t / t, "x ** -1": lambda t: t ** -1,
    "x ** 1.5": lambda t: t ** 1.5, "x.reciprocal()": lambda t: t.reciprocal(),
    "(-x) ** x": lambda t: (-t) ** t, "exp(100 * x)": lambda t: (100 * t).exp(),
}
for name, fn in ops.items():
    y = fn(x)
    y.sum().backward()
    print(f"{name:14s} {y}  grad={x.grad}")
    x.grad = None
print(torch.tensor([1e38]) * 10, torch.tensor([0.]) / 0, torch.tensor(float("nan")) == torch.tensor(float("nan")))
z = torch.tensor([0.], requires_grad=True)
torch.sqrt(z).sum().backward()
print(z.grad)
