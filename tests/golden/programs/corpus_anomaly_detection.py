# Follows the torch.autograd.detect_anomaly docs and debugging posts: a NaN that appears in backward
# (sqrt at 0, 0/0), found with set_detect_anomaly / detect_anomaly; the error names the node.
import torch
from torch import autograd

print(torch.is_anomaly_enabled())


class MyFunc(autograd.Function):
    @staticmethod
    def forward(ctx, inp):
        return inp.clone()

    @staticmethod
    def backward(ctx, gO):
        # Error during the backward pass
        raise RuntimeError("Some error in backward")
        return gO.clone()


def run_fn(a):
    out = MyFunc.apply(a)
    return out.sum()


import warnings

inp = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
out = run_fn(inp)
try:
    out.backward()
except RuntimeError as e:
    print("RuntimeError:", e)

# the docs' example: under detect_anomaly the error comes with a warning that holds the forward
# traceback (only its first line printed here: the traceback names this file's path)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with autograd.detect_anomaly():
        inp = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        out = run_fn(inp)
        try:
            out.backward()
        except RuntimeError as e:
            print("RuntimeError:", e)
for w in caught:
    print(w.category.__name__, str(w.message).splitlines()[0])

# sqrt(0) has an infinite derivative; times 0 it becomes nan
x = torch.tensor([0.0, 4.0], requires_grad=True)
y = torch.sqrt(x) * torch.tensor([0.0, 1.0])
y.sum().backward()
print(x.grad)

x.grad = None
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with autograd.set_detect_anomaly(True, check_nan=True):
        print(torch.is_anomaly_enabled())
        z = torch.sqrt(x) * torch.tensor([0.0, 1.0])
        try:
            z.sum().backward()
        except RuntimeError as e:
            print("RuntimeError:", e)
print([str(w.message).splitlines()[0] for w in caught])
print(torch.is_anomaly_enabled())

# NaN in the forward pass is not an error: check the loss yourself
loss = torch.log(torch.tensor([-1.0, 1.0], requires_grad=True)).sum()
print(loss, torch.isnan(loss).item())

# with check_nan=False the nan passes through
with autograd.detect_anomaly(check_nan=False):
    w = torch.tensor([0.0], requires_grad=True)
    (w / w).sum().backward()
    print(w.grad)
