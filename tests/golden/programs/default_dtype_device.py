# torch.set_default_dtype / get_default_dtype and torch.set_default_device / get_default_device:
# what new tensors, layers and Python-float promotion become, and reprs under a float64 default.
# (The golden suite runs every program in one interpreter: the defaults are restored at the end.)
import torch
import torch.nn as nn
from golden_helpers import attempt

print(torch.get_default_dtype(), torch.tensor([1.5]).dtype)
torch.set_default_dtype(torch.float64)
try:
    print(torch.get_default_dtype())
    x = torch.tensor([1.5, 2.0], requires_grad=True)
    print(x, x.dtype, torch.ones(2), torch.zeros(1).dtype, torch.arange(3.0).dtype, torch.arange(3).dtype)
    print(torch.full((2,), 1.5), torch.full((2,), 1).dtype, torch.eye(2).dtype, torch.linspace(0, 1, 3))
    print(torch.tensor(1).dtype, torch.tensor([True]).dtype, torch.tensor([1.0], dtype=torch.float32))
    print((torch.tensor([1, 2]) * 1.5).dtype, torch.tensor([1.0], dtype=torch.float32) + torch.tensor([1.0]))
    layer = nn.Linear(2, 1)
    print(layer.weight.dtype, layer.bias.dtype)
    y = (x * x).sum()
    y.backward()
    print(y, x.grad)
    print(torch.tensor([0.1]).item() == 0.1, torch.tensor([1 / 3]))
    opt = torch.optim.Adam([x])
    opt.step()
    print(opt.state[x]["step"].dtype)
    attempt("int default", lambda: torch.set_default_dtype(torch.int64))
    attempt("bool default", lambda: torch.set_default_dtype(torch.bool))
    attempt("python float", lambda: torch.set_default_dtype(float))
    attempt("string", lambda: torch.set_default_dtype("float64"))
finally:
    torch.set_default_dtype(torch.float32)
print(torch.get_default_dtype(), torch.tensor([1.5]), torch.tensor([1.5], dtype=torch.float64))

print(torch.get_default_device())
torch.set_default_device("cpu")
try:
    print(torch.get_default_device(), torch.ones(2).device, torch.tensor([1.0]).device, nn.Linear(2, 2).weight.device)
    torch.set_default_device(torch.device("cpu"))
    print(torch.get_default_device(), torch.zeros(1).device)
    attempt("bad device", lambda: torch.set_default_device("cpux"))
finally:
    torch.set_default_device(None)
print(torch.get_default_device())
