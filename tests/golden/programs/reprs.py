# Reprs of ordinary small tensors, with grad_fn / requires_grad / dtype suffixes.
import torch

print(torch.tensor([2., 4., 6.]))
x = torch.tensor(4., requires_grad=True)
print(x, x ** 3)
print(torch.tensor([1.5, 2.25]))
print(torch.tensor([1., 2.], requires_grad=True))
print(torch.tensor([1., 2.], requires_grad=True) * 2)
print(torch.tensor([1, 2, 3]), torch.tensor([True, False]), torch.tensor(5), torch.tensor(-0.))
print(torch.tensor([1., 2.], dtype=torch.float64), torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True))
print(torch.tensor([[1., -2.5], [3.25, 4.]]))
print(torch.tensor([1e-5, 1.]), torch.tensor([1234567., 1.]))
print(torch.tensor([1, 2], dtype=torch.int32), torch.zeros(2, 0), torch.ones(2, 3, dtype=torch.int64))
print(torch.arange(12.).reshape(3, 4).sum(0))
print(torch.ones(2, 3, requires_grad=True).sum(0))
print(torch.tensor([0.1, 0.2]) + torch.tensor([0.2, 0.1]))
print(repr(torch.tensor(2.5)), str(torch.tensor([3.])), f"{torch.tensor(2.5):.2f}")
print(torch.linspace(0, 1, 5), torch.eye(2))
