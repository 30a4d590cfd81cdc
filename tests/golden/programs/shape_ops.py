# Shape ops with backward: reshape/view/flatten/squeeze/unsqueeze/transpose/permute/expand/T, cat/stack/split/chunk.
import torch

base = torch.arange(24.).reshape(2, 3, 4)
weights = torch.tensor([float(i % 5 - 2) for i in range(24)]).reshape(2, 3, 4)
ops = {
    "reshape(6, 4)": lambda a: a.reshape(6, 4), "reshape(-1)": lambda a: a.reshape(-1), "view(4, 6)": lambda a: a.view(4, 6),
    "view(2, -1)": lambda a: a.view(2, -1), "flatten()": lambda a: a.flatten(), "flatten(1)": lambda a: a.flatten(1),
    "unsqueeze(1)": lambda a: a.unsqueeze(1), "unsqueeze(-1)": lambda a: a.unsqueeze(-1),
    "transpose(0, 2)": lambda a: a.transpose(0, 2), "permute(2, 0, 1)": lambda a: a.permute(2, 0, 1),
    "permute(1, 2, 0)": lambda a: a.permute(1, 2, 0), "T[0]": lambda a: a[0].T,
}
for name, fn in ops.items():
    a = base.clone().requires_grad_()
    y = fn(a)
    (y * fn(weights)).sum().backward()
    print(f"{name}: {tuple(y.shape)} {type(y.grad_fn).__name__} {torch.equal(a.grad, weights)}")

x = torch.tensor([[1., 2., 3.]], requires_grad=True)
y = x.squeeze()
print(y, y.shape, x.squeeze(0).shape, x.squeeze(1).shape, x.unsqueeze(0).squeeze().shape)
(y * torch.tensor([1., 2., 3.])).sum().backward()
print(x.grad)

v = torch.tensor([1., 2., 3.], requires_grad=True)
e = v.expand(2, 3)
print(e)
(e * torch.tensor([[1., 1., 1.], [2., 3., 4.]])).sum().backward()
print(v.grad)
c = torch.tensor([[5.], [6.]], requires_grad=True)
(c.expand(2, 3) * torch.tensor([[1., 2., 3.], [4., 5., 6.]])).sum().backward()
print(c.grad)
print(v.expand(2, -1).shape)

a = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
b = torch.tensor([[5., 6.]], requires_grad=True)
cat = torch.cat([a, b])
print(cat)
(cat * torch.tensor([[1., 2.], [3., 4.], [5., 6.]])).sum().backward()
print(a.grad, b.grad)
a.grad = None
cat1 = torch.cat([a, a * 10], dim=1)
print(cat1)
cat1.sum().backward()
print(a.grad)
a.grad = None
st = torch.stack([a, a * 2])
print(st.shape, st)
st2 = torch.stack([a[0], a[1]], dim=1)
print(st2)
(st2 * torch.tensor([[1., 2.], [3., 4.]])).sum().backward()
print(a.grad)
a.grad = None
x = torch.arange(10., requires_grad=True)
parts = x.split(4)
print(parts)
(parts[0].sum() * 1 + parts[2].sum() * 3).backward()
print(x.grad)
x.grad = None
parts = x.split([3, 7])
print([p.shape for p in parts])
parts[1].sum().backward()
print(x.grad)
x.grad = None
ch = x.reshape(2, 5).chunk(3, dim=1)
print(ch)
(ch[1] * 2).sum().backward()
print(x.grad)
print(torch.split(x, 5)[1], torch.chunk(x, 2)[0])
m = torch.arange(6.).reshape(2, 3)
print(m.T, m.t(), m.transpose(0, 1).shape, m.permute(1, 0).shape, m.reshape(3, 2), m.view(6))
try:
    m.t().view(6)
except RuntimeError as e:
    print(e)
print(m.t().reshape(6), m.t().contiguous().view(6))
