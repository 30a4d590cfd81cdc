# Creation functions, dtypes and tensor attributes/methods.
import numpy as np
import torch

x = torch.ones(2, 3)
print(x.dtype, x.shape, x.size(), x.size(1), x.dim(), x.ndim, x.numel(), x.device, len(x))
print(x.shape == (2, 3), isinstance(x.shape, tuple), list(x.shape), tuple(x.shape), x.shape[0])
print(torch.Size([]), torch.tensor(1.).shape, torch.Size([3]))
print(torch.float64, torch.float32, torch.int64, torch.bool, torch.float, torch.double, torch.long)
print(torch.tensor([1, 2]).dtype, torch.tensor([1., 2]).dtype, torch.tensor([True]).dtype,
      torch.tensor(np.array([1.])).dtype, torch.tensor([1, 2.5]).dtype)
print(torch.zeros(2), torch.zeros(2, 3).shape, torch.zeros((2, 1)), torch.ones(3, dtype=torch.int64))
print(torch.full((2, 2), 7.), torch.full((2,), 3), torch.full((1,), True))
print(torch.empty(2, 3).shape, torch.empty(2, 3).dtype)
print(torch.eye(3), torch.eye(2, 3))
print(torch.arange(5), torch.arange(1, 4), torch.arange(0, 1, 0.25), torch.arange(3.))
print(torch.linspace(-1, 1, 5), torch.linspace(0, 10, 3).dtype)
y = torch.tensor([[1., 2.], [3., 4.]])
print(torch.zeros_like(y), torch.ones_like(y), torch.full_like(y, 2.5), torch.empty_like(y).shape)
print(torch.zeros_like(y, dtype=torch.int64), torch.ones_like(torch.tensor([1, 2])))
print(torch.randn(2, 3).shape, torch.rand(4).dtype, torch.randint(0, 10, (3, 2)).dtype,
      torch.randint(5, (2,)).shape, torch.randn(2, dtype=torch.float64).dtype)
torch.manual_seed(0)
r1 = torch.randn(3)
torch.manual_seed(0)
r2 = torch.randn(3)
print(torch.equal(r1, r2), torch.rand(100).min() >= 0, torch.rand(100).max() < 1)
a = np.array([1., 2., 3.])
t = torch.from_numpy(a)
a[0] = 10.
print(t, t.dtype)
t[1] = 20.
print(a)
i = torch.tensor(3).item()
f = torch.tensor(3.).item()
b = torch.tensor(True).item()
print(i, type(i).__name__, f, type(f).__name__, b, type(b).__name__)
print(torch.tensor([1.5]).tolist(), torch.tensor(1.5).tolist(), torch.tensor([[1, 2]]).tolist(),
      torch.tensor([0.1]).tolist(), torch.tensor(0.1).item())
print(y.T, y.t(), y.clone(), y.contiguous(), y.cpu(), y.to(torch.float64), y.to(torch.int64))
print(y.numpy(), type(y.numpy()).__name__, y.numpy().dtype)
print(y.data, y.data.requires_grad, torch.tensor([[1., 2.]]).item() if False else y[0, 1].item())
print(torch.allclose(y, y + 1e-9), torch.equal(y, y.clone()), torch.equal(y, y + 1), torch.isclose(y, y + 1e-9))
print(torch.allclose(torch.tensor([1., 2.]), torch.tensor([1., 2.1])), torch.equal(torch.tensor([1.]), torch.tensor([1., 1.])))
g = torch.tensor([1., 2.], requires_grad=True)
try:
    g.numpy()
except RuntimeError as e:
    print(e)
try:
    (g * 2).numpy()
except RuntimeError as e:
    print(e)
print(g.detach().numpy(), (g * 2).tolist(), (g * 2).sum().item())
try:
    torch.tensor([1., 2.]).item()
except RuntimeError as e:
    print(e)
print(torch.tensor([1., 2.]).is_floating_point(), torch.tensor([1]).is_floating_point(), x.is_contiguous())
print(torch.tensor(np.float64(1.)).dtype, torch.tensor(np.int32(1)).dtype, torch.tensor(np.bool_(True)).dtype)
print(torch.tensor(g))
print(torch.tensor([torch.tensor(1.), torch.tensor(2.)]))
