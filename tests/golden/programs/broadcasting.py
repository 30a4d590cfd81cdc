# Broadcasting: gradients summed back to each input's shape and cast to its dtype.
import torch

a = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
row = torch.tensor([10., 20., 30.], requires_grad=True)
col = torch.tensor([[1.], [2.]], requires_grad=True)
s = torch.tensor(2., requires_grad=True)
one = torch.tensor([[3.]], requires_grad=True)
y = a * row + col * s - one / col
print(y)
y.sum().backward()
for t in (a, row, col, s, one):
    print(t.grad, t.grad.shape)
u = torch.tensor([1., 2., 3.], requires_grad=True)
w = torch.tensor([[1.], [2.]], dtype=torch.float64, requires_grad=True)
z = u * w
print(z, z.dtype)
z.sum().backward()
print(u.grad, u.grad.dtype, w.grad, w.grad.dtype)
p = torch.tensor([[2.]], requires_grad=True)
q = (p ** torch.tensor([1., 2., 3.])).sum()
q.backward()
print(p.grad)
b3 = torch.ones(2, 1, 3, requires_grad=True)
c3 = torch.ones(4, 1, requires_grad=True)
(b3 + c3).sum().backward()
print(b3.grad.shape, b3.grad, c3.grad)
x = torch.tensor([1., 2.], requires_grad=True)
g = torch.where(torch.tensor([[True], [False]]), x, torch.tensor(0.))
g.sum().backward()
print(g, x.grad)
