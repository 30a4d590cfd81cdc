# Type promotion between tensors, 0-d tensors and Python numbers.
import torch

i = torch.tensor([1, 2])
f = torch.tensor([1., 2.])
d = torch.tensor([1., 2.], dtype=torch.float64)
b = torch.tensor([True, False])
i32 = torch.tensor([1, 2], dtype=torch.int32)
cases = {
    "int64 * 2.5": lambda: i * 2.5, "int64 + float32": lambda: i + f, "float32 + float64": lambda: f + d,
    "float32 + 1": lambda: f + 1, "bool + 1": lambda: b + 1, "bool * 1.5": lambda: b * 1.5,
    "int64 / int64": lambda: i / i, "int64 ** 2": lambda: i ** 2, "2 ** int64": lambda: 2 ** i,
    "2.0 ** int64": lambda: 2.0 ** i, "int64 ** 0.5": lambda: i ** 0.5,
    "int32 + int64": lambda: i32 + i, "int32 + 1": lambda: i32 + 1, "int32 * 1.5": lambda: i32 * 1.5,
    "int32 / 2": lambda: i32 / 2,
    "float32 + 0-d float64": lambda: f + torch.tensor(1., dtype=torch.float64),
    "int64 + 0-d float64": lambda: i + torch.tensor(1., dtype=torch.float64),
    "0-d int + 0-d float64": lambda: torch.tensor(1) + torch.tensor(1., dtype=torch.float64),
    "float32 + float64 0-d requires": lambda: f + torch.tensor(1., dtype=torch.float64, requires_grad=True),
    "float64 * 3": lambda: d * 3, "10 - float64": lambda: 10 - d, "1 / int64": lambda: 1 / i,
    "where(b, i, 0.5)": lambda: torch.where(b, i, 0.5),
    "float32.sum()": lambda: f.sum(), "int64.sum()": lambda: i.sum(), "bool.sum()": lambda: b.sum(),
    "int32.sum()": lambda: i32.sum(), "int64.mean()": lambda: i.mean(), "int64.float().mean()": lambda: i.float().mean(),
    "int64.exp()": lambda: i.exp(), "int64.sqrt()": lambda: i.sqrt(), "f == i": lambda: f == i, "i > 1.5": lambda: i > 1.5,
    "maximum(i, f)": lambda: torch.maximum(i, f), "cat([f, d])": lambda: torch.cat([f, d]),
}
for k, fn in cases.items():
    try:
        r = fn()
        print(f"{k:32s} -> {r.dtype}   {r!r}")
    except Exception as e:
        print(f"{k:32s} -> {type(e).__name__}: {e}")

# gradients come back in each input's dtype
x = torch.tensor([1., 2.], requires_grad=True)
y = torch.tensor([3., 4.], dtype=torch.float64, requires_grad=True)
z = (x * y).sum()
print(z.dtype)
z.backward()
print(x.grad, y.grad)
x = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)
(x.float() * 3).sum().backward()
print(x.grad, x.float().grad_fn, x.to(torch.float32).grad_fn)
