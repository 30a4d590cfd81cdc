# Values and gradients of pointwise ops, reversed operands and zero-gradient ops.
import torch

vals = [0.5, 1.25, 2.0]
ops = {
    "x + 3": lambda x: x + 3, "3 + x": lambda x: 3 + x, "x - 3": lambda x: x - 3, "10 - x": lambda x: 10 - x,
    "x * 3": lambda x: x * 3, "2 * x": lambda x: 2 * x, "x / 4": lambda x: x / 4, "1 / x": lambda x: 1 / x,
    "x ** 2": lambda x: x ** 2, "x ** 0.5": lambda x: x ** 0.5, "2 ** x": lambda x: 2 ** x, "-x": lambda x: -x,
    "x ** -1": lambda x: x ** -1, "x.pow(3)": lambda x: x.pow(3), "torch.pow(x, 2.5)": lambda x: torch.pow(x, 2.5),
    "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "abs": torch.abs, "sin": torch.sin, "cos": torch.cos,
    "tanh": torch.tanh, "sigmoid": torch.sigmoid, "relu": lambda x: torch.relu(x - 1),
    "clamp(0.7, 1.5)": lambda x: x.clamp(0.7, 1.5), "clamp(min=1)": lambda x: torch.clamp(x, min=1.0),
    "clamp(max=1)": lambda x: x.clamp(max=1.0), "round": lambda x: (x * 3).round(), "floor": lambda x: x.floor(),
    "sign": lambda x: (x - 1).sign(), "abs(x-1.25)": lambda x: (x - 1.25).abs(),
    "x * x": lambda x: x * x, "x / x.exp()": lambda x: x / x.exp(), "x ** x": lambda x: x ** x,
    "maximum": lambda x: torch.maximum(x, torch.tensor([1., 1., 1.])),
    "minimum": lambda x: torch.minimum(x, torch.tensor([1., 1.25, 3.])),
    "where": lambda x: torch.where(x > 1, x * x, -x),
    "x.reciprocal()": lambda x: x.reciprocal(),
}
for name, fn in ops.items():
    x = torch.tensor(vals, requires_grad=True)
    y = fn(x)
    y.sum().backward()
    print(f"{name:18s} {y}  grad={x.grad}")

a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([3., -1.], requires_grad=True)
for name, fn in {"a ** b": lambda: a ** b, "a / b": lambda: a / b, "a - b": lambda: a - b,
                 "max(a, b)": lambda: torch.maximum(a, b), "a.clamp(min=b)": lambda: torch.where(a > b, a, b)}.items():
    y = fn()
    y.sum().backward()
    print(name, y, a.grad, b.grad)
    a.grad = b.grad = None
x = torch.tensor([-1., 0., 2.], requires_grad=True)
(torch.relu(x) + x.abs() + torch.maximum(x, torch.zeros(3))).sum().backward()
print(x.grad)
