# Follows PyTorch's "Tensors" tutorial and the views/strides material of course notebooks: shapes,
# dtypes, stride() and contiguity, masks built with %, round(decimals=), unflatten, in-place ops with
# a trailing underscore, and set_default_dtype(torch.float64) as scientific notebooks start.
import torch

data = [[1, 2], [3, 4]]
x_data = torch.tensor(data)
x_ones = torch.ones_like(x_data)
print(f"Ones Tensor: \n {x_ones} \n")
x_rand = torch.full_like(x_data, 0.5, dtype=torch.float)
print(f"Full Tensor: \n {x_rand} \n")
shape = (2, 3,)
print(torch.zeros(shape), torch.ones(shape).dtype)
tensor = torch.arange(12.0).reshape(3, 4)
print(f"Shape of tensor: {tensor.shape}")
print(f"Datatype of tensor: {tensor.dtype}")
print(f"Device tensor is stored on: {tensor.device}")
print(f"First row: {tensor[0]}")
print(f"First column: {tensor[:, 0]}")
print(f"Last column: {tensor[..., -1]}")
tensor[:, 1] = 0
print(tensor)
t1 = torch.cat([tensor, tensor, tensor], dim=1)
print(t1.shape)
y1 = tensor @ tensor.T
y3 = torch.rand_like(y1)
torch.matmul(tensor, tensor.T, out=y3)
z1 = tensor * tensor
z3 = torch.zeros(3, 4)
torch.mul(tensor, tensor, out=z3)
print(y1, torch.equal(y1, y3), torch.equal(z1, z3))
torch.matmul(tensor, tensor.T, out=z3)
print(z3.shape)
try:
    torch.mul(tensor.requires_grad_(), 2.0, out=torch.zeros(3, 4))
except RuntimeError as e:
    print("RuntimeError:", e)
tensor.requires_grad_(False)
z1 = tensor * tensor
agg = tensor.sum()
agg_item = agg.item()
print(agg_item, type(agg_item))
print(f"{tensor} \n")
tensor.add_(5)
print(tensor)

# strides and views
t = torch.arange(6)
print(t.stride(), t.view(2, 3).stride(), t.view(2, 3).t().stride(), t.view(2, 3).t().is_contiguous())
print(t.view(2, 3).t().contiguous().stride(), t.view(2, 3)[:, 1].stride(), t.view(2, 3).stride(1))
print(torch.ones(2, 3, 4).stride(), torch.ones(2, 3, 4).permute(2, 0, 1).stride())
print(t.view(2, 3).unsqueeze(1).stride(), torch.ones(4, 1).expand(4, 3).stride())

# % for masks and cycles
idx = torch.arange(10)
print(idx % 3, (idx % 2 == 0).nonzero().flatten())
print(torch.tensor([-7.5, 7.5, -1.0]) % 2, torch.tensor([-7, 7]) % 3, idx[idx % 4 == 1])
print(torch.remainder(torch.tensor([-3.0, 5.0]), 2), torch.fmod(torch.tensor([-3.0, 5.0]), 2))
w = torch.tensor([1.5, 2.5], requires_grad=True)
r = w % 1.0
r.sum().backward()
print(r, r.grad_fn.name(), w.grad)

# round with decimals, as results tables print them
vals = torch.tensor([3.14159, 2.71828, -1.41421, 0.5, 1.5, 2.5])
print(vals.round(), torch.round(vals, decimals=2), vals.round(decimals=3), vals.round(decimals=-1))

# unflatten undoes flatten
imgs = torch.arange(24.0).reshape(2, 12)
print(imgs.unflatten(1, (3, 4)).shape, imgs.unflatten(-1, (2, -1)).shape, torch.unflatten(imgs, 0, (1, 2)).shape)
flat = torch.arange(6.0, requires_grad=True)
u = flat.unflatten(0, (2, 3))
(u * torch.tensor([[1.0], [2.0]])).sum().backward()
print(u.grad_fn.name(), flat.grad)

# float64 as the default, and integer division giving floats
torch.set_default_dtype(torch.float64)
print(torch.tensor([1.0, 2.0]).dtype, torch.arange(3) / 2, (torch.arange(3) / 2).dtype)
print(torch.tensor([1, 2]) / torch.tensor([4, 8]), torch.ones(2).dtype, torch.linspace(0, 1, 3).dtype)
print(torch.tensor(3) / 2, torch.get_default_dtype(), torch.arange(4).float().dtype, torch.Tensor([1, 2]).dtype)
torch.set_default_dtype(torch.float32)
print((torch.arange(3) / 2).dtype)
