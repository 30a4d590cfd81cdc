# Module hooks from PyTorch's docs (a full backward hook returning a list, the deprecated register_backward_hook
# and its warning), nn.init.orthogonal_, nn.utils.skip_init, DataParallel without GPUs, ParameterDict order.
import torch
import torch.nn as nn
def linear():
    m = nn.Linear(3, 2)
    with torch.no_grad():
        m.weight.copy_(torch.tensor([[0.1, 0.2, 0.3], [-0.4, 0.5, -0.6]])); m.bias.fill_(0.1)
    return m
x = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
def as_list(module, grad_input, grad_output):
    print("hook", type(grad_input).__name__, [g.shape for g in grad_input], [g.shape for g in grad_output])
    return [g * 2 for g in grad_input]
m = linear()
h = m.register_full_backward_hook(as_list)
m(x).sum().backward(); print(x.grad); h.remove()
x.grad = None
def old_hook(module, grad_input, grad_output):
    print("old", type(module).__name__, type(grad_input).__name__, [None if g is None else tuple(g.shape) for g in grad_input], [tuple(g.shape) for g in grad_output])
m = linear()
h = m.register_backward_hook(old_hook)
m(x).sum().backward(); print(x.grad); h.remove()
m(x).sum().backward(); print(x.grad)
x.grad = None
seq = nn.Sequential(linear(), nn.ReLU())
h = seq.register_backward_hook(old_hook)
seq(x).sum().backward(); print(x.grad)
r = nn.ReLU()
r.register_backward_hook(lambda mod, gi, go: (gi[0] * 10,))
x.grad = None
r(x - 1.5).sum().backward(); print(x.grad)
try:
    r.register_full_backward_hook(as_list)
except RuntimeError as e:
    print("both:", e)
torch.manual_seed(0)
w = torch.empty(3, 5)
nn.init.orthogonal_(w)
print(w.shape, torch.allclose(w @ w.t(), torch.eye(3), atol=1e-5))
w = torch.empty(6, 2, 2)
nn.init.orthogonal_(w, gain=2.0)
flat = w.reshape(6, 4)
print(torch.allclose(flat.t() @ flat, 4 * torch.eye(4), atol=1e-4))
for bad in [torch.ones(3)]:
    try:
        nn.init.orthogonal_(bad)
    except ValueError as e:
        print("ValueError:", e)
lin = nn.utils.skip_init(nn.Linear, 4, 3)
print(type(lin).__name__, lin.weight.shape, lin.bias.shape, lin.weight.requires_grad)
for cls in [nn.ReLU]:
    try:
        nn.utils.skip_init(cls)
    except RuntimeError as e:
        print("RuntimeError:", e)
dp = nn.DataParallel(nn.Linear(2, 2))
print(list(dp.state_dict().keys()), dp.device_ids)
print(dp)
out = dp(torch.ones(1, 2))
print(out.shape, out.grad_fn.name())
pd = nn.ParameterDict({"b": nn.Parameter(torch.ones(1)), "a": nn.Parameter(torch.zeros(2))})
print(list(pd.keys()), list(pd.state_dict().keys()))
pd.update({"z": nn.Parameter(torch.ones(1)), "c": nn.Parameter(torch.ones(1))})
print(list(pd.keys()))
print(pd)
x = torch.tensor([1.0, 2.0], requires_grad=True)
print(float(x.sum()), int(x[0]), x.sum().item())
