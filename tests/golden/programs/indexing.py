# Indexing and slicing with backward: ints, slices, boolean masks, integer arrays, setitem.
import torch

data = [[1., 2., 3., 4.], [5., 6., 7., 8.], [9., 10., 11., 12.]]
ops = {
    "x[1]": lambda x: x[1], "x[-1]": lambda x: x[-1], "x[0, 2]": lambda x: x[0, 2], "x[:, 1:]": lambda x: x[:, 1:],
    "x[1:, ::2]": lambda x: x[1:, ::2], "x[:, 0]": lambda x: x[:, 0], "x[..., 1]": lambda x: x[..., 1],
    "x[None, 0]": lambda x: x[None, 0], "x[x > 5]": lambda x: x[x > 5], "x[[0, 2]]": lambda x: x[[0, 2]],
    "x[[0, 0, 2]]": lambda x: x[[0, 0, 2]], "x[torch.tensor([2, 1])]": lambda x: x[torch.tensor([2, 1])],
    "x[[0, 1], [1, 3]]": lambda x: x[[0, 1], [1, 3]], "x[:, [3, 3, 0]]": lambda x: x[:, [3, 3, 0]],
    "x[torch.tensor([True, False, True])]": lambda x: x[torch.tensor([True, False, True])],
    "x[1][2]": lambda x: x[1][2], "x[-2:, -1]": lambda x: x[-2:, -1],
}
for name, fn in ops.items():
    x = torch.tensor(data, requires_grad=True)
    y = fn(x)
    (y * y).sum().backward()
    print(f"{name}: {y}")
    print(x.grad)

x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x * 2
y[1] = 10.
print(y)
y.sum().backward()
print(x.grad)
x.grad = None
y = x * 2
y[0:2] = x[1:] * x[1:]
print(y)
y.sum().backward()
print(x.grad)
z = torch.zeros(2, 3)
z[0] = torch.tensor([1., 2., 3.])
z[1, 1:] = 5.
z[z > 2] = -1.
print(z)
m = torch.tensor([[1., 2.], [3., 4.]])
m[torch.tensor([True, False])] = 0.
print(m, m[0, 1].item(), m[1].tolist())
