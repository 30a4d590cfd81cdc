# Tensor.repeat (PINNs tile collocation points), F.softplus and F.logsigmoid (Bayes-by-backprop, word2vec's
# negative sampling), F.normalize (SimCLR), with their gradients and saved values.
import torch
import torch.nn.functional as F
x = torch.tensor([-30.0, -1.0, 0.0, 1.0, 25.0], requires_grad=True)
y = F.softplus(x)
print(y, y.grad_fn._saved_beta, y.grad_fn._saved_threshold)
print(F.softplus(x, beta=2, threshold=5))
z = F.logsigmoid(x)
print(z)
(y.sum() + z.sum() + F.softplus(x, beta=2, threshold=5).sum()).backward()
print(x.grad)
a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
r = a.repeat(2, 3)
print(r.shape, r.grad_fn.name(), r.grad_fn._saved_repeats, r.grad_fn._saved_self_sym_sizes)
(r * torch.arange(24.0).reshape(4, 6)).sum().backward()
print(a.grad)
print(torch.ones(2).repeat(torch.Size([2, 2])).shape, torch.ones(2).repeat((3,)).shape, a.repeat(1, 2, 1).shape)
try:
    torch.ones(2, 3).repeat(2)
except RuntimeError as e:
    print(e)
v = torch.tensor([[3.0, 4.0], [0.0, 0.0]], requires_grad=True)
n = F.normalize(v)
print(n, F.normalize(v, dim=0), F.normalize(v, p=1))
n.sum().backward()
print(v.grad)
