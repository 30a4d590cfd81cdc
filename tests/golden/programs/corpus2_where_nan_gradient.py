# NaN gradients through torch.where and at the origin, after the StackOverflow/PyTorch forum questions
# "torch.where produces nan in backward" (https://github.com/pytorch/pytorch/issues/68425 discussion; the double-where
# workaround) and "Gradient of torch.norm is NaN at zero" (https://discuss.pytorch.org/t/...): sqrt at 0, norm of a zero
# vector, and the safe versions people post as answers.
import torch

x = torch.tensor([-1.0, 0.0, 4.0], requires_grad=True)
y = torch.where(x > 0, torch.sqrt(x), torch.zeros_like(x))
y.sum().backward()
print(y, x.grad)
x.grad = None
safe_x = torch.where(x > 0, x, torch.ones_like(x))
y = torch.where(x > 0, torch.sqrt(safe_x), torch.zeros_like(x))
y.sum().backward()
print(y, x.grad)
z = torch.zeros(3, requires_grad=True)
n = z.norm()
n.backward()
print(n, z.grad)
z.grad = None
n2 = torch.linalg.vector_norm(z)
n2.backward()
print(z.grad)
z.grad = None
n3 = torch.sqrt((z ** 2).sum() + 1e-12)
n3.backward()
print(n3, z.grad)
w = torch.tensor([0.0, 1.0], requires_grad=True)
(w ** 0.5).sum().backward()
print(w.grad)
w.grad = None
torch.abs(w).sum().backward()
print(w.grad)
v = torch.tensor([0.0, 2.0], requires_grad=True)
(v * torch.log(v)).sum().backward()
print(v.grad)
v.grad = None
torch.xlogy(v, v).sum().backward()
print(v.grad)
u = torch.tensor([0.0, 1.0], requires_grad=True)
torch.sqrt(u).sum().mul(0).backward()
print(u.grad)
