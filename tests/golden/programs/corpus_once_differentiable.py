# Follows the torch.autograd.function docs for once_differentiable, mark_non_differentiable,
# set_materialize_grads and mark_dirty: a sort that returns indices, a backward written in numpy,
# an in-place Function.
import numpy as np
import torch
from torch.autograd import Function
from torch.autograd.function import once_differentiable


class NumpyCube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.from_numpy(x.detach().numpy() ** 3)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return torch.from_numpy(3 * x.numpy() ** 2 * grad_output.numpy())


x = torch.tensor([1.0, 2.0, -0.5], requires_grad=True)
y = NumpyCube.apply(x)
y.sum().backward()
print(y, x.grad)
x.grad = None
g, = torch.autograd.grad(NumpyCube.apply(x).sum(), x, create_graph=True)
print(g, g.requires_grad, g.grad_fn)
try:
    g.sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)


class Sort(Function):
    @staticmethod
    def forward(ctx, x):
        sorted_x, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(x, idx)
        return sorted_x, idx

    @staticmethod
    def backward(ctx, g1, g2):  # still need to accept g2
        x, idx = ctx.saved_tensors
        grad_input = torch.zeros_like(x)
        grad_input.index_add_(0, idx, g1)
        return grad_input


a = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
values, indices = Sort.apply(a)
print(values, indices, indices.requires_grad)
(values * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
print(a.grad)


class SimpleFunc(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return x.clone(), x.clone()

    @staticmethod
    @once_differentiable
    def backward(ctx, g1, g2):
        x, = ctx.saved_tensors
        grad_input = torch.zeros_like(x)
        if g1 is not None:
            grad_input += g1
        if g2 is not None:
            grad_input += g2
        print("g1 is None:", g1 is None, "g2 is None:", g2 is None)
        return grad_input


b = torch.tensor([1.0, 2.0], requires_grad=True)
o1, o2 = SimpleFunc.apply(b)
o1.sum().backward()
print(b.grad)


class AddOneInplace(Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


c = torch.tensor([1.0, 2.0], requires_grad=True)
d = c.clone()
e = AddOneInplace.apply(d)
print(e is d, d, d.grad_fn.name())
(e * e).sum().backward()
print(c.grad)
