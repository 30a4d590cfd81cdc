# Reductions with dim and keepdim: values and gradients.
import torch

data = [[1., -2., 3., 0.5], [4., 0.25, -1., 2.], [-3., 1.5, 2.5, -0.5]]
ops = {
    "sum()": lambda a: a.sum(), "sum(0)": lambda a: a.sum(0), "sum(1, keepdim=True)": lambda a: a.sum(1, keepdim=True),
    "sum(dim=(0, 1))": lambda a: a.sum(dim=(0, 1)), "sum(-1)": lambda a: a.sum(-1),
    "torch.sum(a, 0)": lambda a: torch.sum(a, 0),
    "mean()": lambda a: a.mean(), "mean(1)": lambda a: a.mean(1), "mean(0, keepdim=True)": lambda a: a.mean(0, keepdim=True),
    "max()": lambda a: a.max(), "max(1).values": lambda a: a.max(1).values, "max(0, keepdim=True)[0]": lambda a: a.max(0, keepdim=True)[0],
    "min()": lambda a: a.min(), "min(dim=1).values": lambda a: a.min(dim=1).values,
    "amax()": lambda a: a.amax(), "amax(1)": lambda a: a.amax(1), "amax(0, keepdim=True)": lambda a: a.amax(0, keepdim=True),
    "prod()": lambda a: a.prod(), "prod(1)": lambda a: a.prod(1), "prod(0, keepdim=True)": lambda a: a.prod(0, keepdim=True),
    "norm()": lambda a: a.norm(), "norm(dim=1)": lambda a: a.norm(dim=1),
    "var()": lambda a: a.var(), "var(1)": lambda a: a.var(1), "var(0, keepdim=True)": lambda a: a.var(0, keepdim=True),
    "std()": lambda a: a.std(), "std(1)": lambda a: a.std(1), "std(0, keepdim=True)": lambda a: a.std(0, keepdim=True),
    "torch.mean(a)": lambda a: torch.mean(a), "torch.max(a)": lambda a: torch.max(a),
}
for name, fn in ops.items():
    a = torch.tensor(data, requires_grad=True)
    y = fn(a)
    y.sum().backward()
    print(f"{name}: {y}")
    print(a.grad)

a = torch.tensor(data, requires_grad=True)
r = a.max(dim=1)
print(r.values, r.indices, r[1])
r = torch.max(a, 0)
print(r.values, r.indices)
vals, idx = a.min(1, keepdim=True)
print(vals, idx)
# ties: max() splits the gradient evenly, max(dim) picks one
t = torch.tensor([[1., 3., 3.], [2., 2., 0.]], requires_grad=True)
t.max().backward()
print(t.grad)
t.grad = None
t.max(1).values.sum().backward()
print(t.grad)
t.grad = None
t.amax(1).sum().backward()
print(t.grad)
print(torch.tensor([1., 2., 3.]).sum(), torch.tensor([[1, 2], [3, 4]]).sum(0), torch.tensor([True, True]).sum())
print(torch.tensor([[1., 2.], [3., 4.]]).prod(), torch.tensor([2., 4., 4., 4., 5., 5., 7., 9.]).std())
print(torch.tensor([1., 2., 3., 4.]).var(correction=0) if True else None)

# One element: no degrees of freedom, so var and std are nan (with PyTorch's warning), and so are their gradients.
for name in ("var", "std"):
    x = torch.tensor([3.], requires_grad=True)
    y = getattr(x, name)()
    y.backward()
    print(name, y, x.grad)
