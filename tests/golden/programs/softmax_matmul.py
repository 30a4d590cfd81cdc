# softmax / log_softmax / logsumexp and matmul / mm / bmm: values and gradients.
import torch

logits = [[1., 2., 3.], [1., 1., 1.], [-1., 0., 4.]]
for name, fn in {"softmax(1)": lambda a: a.softmax(1), "softmax(0)": lambda a: torch.softmax(a, dim=0),
                 "log_softmax(1)": lambda a: a.log_softmax(dim=1), "log_softmax(0)": lambda a: torch.log_softmax(a, 0),
                 "logsumexp(1)": lambda a: a.logsumexp(1), "logsumexp(0, keepdim)": lambda a: torch.logsumexp(a, 0, keepdim=True)}.items():
    a = torch.tensor(logits, requires_grad=True)
    y = fn(a)
    (y * torch.tensor([float(i % 3 - 1) for i in range(y.numel())]).reshape(y.shape)).sum().backward()
    print(name, y)
    print(a.grad)
big = torch.tensor([1000., 1001., 1002.])
print(big.softmax(0), big.log_softmax(0), big.logsumexp(0))

a = torch.tensor([[1., 2.], [3., 4.], [5., 6.]], requires_grad=True)
b = torch.tensor([[1., -1., 0.5], [2., 0., -0.5]], requires_grad=True)
c = a @ b
print(c)
(c * c).sum().backward()
print(a.grad, b.grad)
a.grad = b.grad = None
c = torch.mm(a, b)
c.sum().backward()
print(c.grad_fn.name(), a.grad, b.grad)
a.grad = b.grad = None
c = a.matmul(b).sum()
c.backward()
print(a.grad, b.grad)
v = torch.tensor([1., -1.], requires_grad=True)
w = torch.tensor([2., 3.], requires_grad=True)
d = v @ w
print(d)
d.backward()
print(v.grad, w.grad)
v.grad = None
mv = a @ v
print(mv)
mv.sum().backward()
print(v.grad, a.grad)
B1 = torch.arange(12.).reshape(2, 3, 2).requires_grad_()
B2 = (torch.arange(8.).reshape(2, 2, 2) - 3).requires_grad_()
out = torch.bmm(B1, B2)
print(out)
out.sum().backward()
print(B1.grad, B2.grad)
B1.grad = None
out = B1 @ torch.tensor([[1.], [2.]])
print(out.shape)
out.sum().backward()
print(B1.grad)
