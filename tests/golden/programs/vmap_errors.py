# requires: func.vmap
# The mistakes people make with torch.func.vmap, and what PyTorch says about each.
import warnings

import torch
from torch.func import grad, vmap
from golden_helpers import attempt

x = torch.arange(6.).reshape(2, 3)
y = torch.arange(4.)
attempt("sizes differ", lambda: vmap(torch.add)(x, y))
attempt("in_dims too long", lambda: vmap(torch.mul, in_dims=(0, 0, 0))(x, x))
attempt("in_dims not int", lambda: vmap(torch.sin, in_dims="0")(x))
attempt("in_dims out of range", lambda: vmap(torch.sin, in_dims=2)(x))
attempt("in_dims on a number", lambda: vmap(lambda a, n: a * n, in_dims=(0, 0))(x, 2.0))
attempt("all in_dims None", lambda: vmap(torch.sin, in_dims=None)(x))
attempt("no tensor inputs", lambda: vmap(lambda n: n)(3.0))
attempt("out_dims too long", lambda: vmap(torch.sin, out_dims=(0, 1))(x))
attempt("out_dims out of range", lambda: vmap(torch.sin, out_dims=2)(x))
attempt("returns a number", lambda: vmap(lambda a: 1.0)(x))
attempt("item", lambda: vmap(lambda a: a.sum().item())(x))
attempt("control flow", lambda: vmap(lambda a: a if a.sum() > 0 else -a)(x))
attempt("tolist", lambda: vmap(lambda a: a.tolist())(x))


def write_into_unbatched(a):
    out = torch.zeros(3)
    out.add_(a)
    return out


attempt("in-place into unbatched", lambda: vmap(write_into_unbatched)(x))
attempt("in-place into batched", lambda: vmap(lambda a: a.mul_(2))(x.clone()))
attempt("randomness error", lambda: vmap(lambda a: a + torch.rand(3))(x))
attempt("randomness bad", lambda: vmap(torch.sin, randomness="sometimes")(x))
attempt("randomness same", lambda: vmap(lambda a: a * 0 + torch.ones(3).normal_() * 0, randomness="same")(x))
attempt("chunk_size 0", lambda: vmap(torch.sin, chunk_size=0)(x))
attempt("chunk_size 1", lambda: vmap(torch.sin, chunk_size=1)(x))
attempt("backward inside", lambda: vmap(lambda a: a.sum().backward())(x.clone().requires_grad_()))
attempt("grad of non-scalar", lambda: vmap(grad(lambda a: a * 2))(x))
attempt("non-tensor output of grad", lambda: vmap(grad(lambda a: 2.0))(x))
print(vmap(torch.dot)(x, x))
print(vmap(torch.mv, in_dims=(None, 0))(x, torch.ones(4, 3)))
print(vmap(torch.sum, in_dims=1)(x))
print(vmap(lambda a: a.sum(0), in_dims=1, out_dims=0)(x))
print(vmap(lambda a: (a, a * 2), out_dims=(0, 1))(x))
print(vmap(lambda d: d["a"] + d["b"])({"a": x, "b": x}))
print(vmap(vmap(torch.mul))(x, x))
print(vmap(vmap(torch.mul, in_dims=(0, None)), in_dims=(None, 0))(torch.arange(3.), torch.arange(2.)))


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class DoubleNewStyle(torch.autograd.Function):
    @staticmethod
    def forward(a):
        return a * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g * 2


class DoubleGenerated(DoubleNewStyle):
    generate_vmap_rule = True


attempt("custom Function with ctx", lambda: vmap(Double.apply)(x))
attempt("custom Function, no vmap rule", lambda: vmap(DoubleNewStyle.apply)(x))
attempt("custom Function, generated rule", lambda: vmap(DoubleGenerated.apply)(x))
attempt("nonzero", lambda: vmap(torch.nonzero)(x))
attempt("mask", lambda: vmap(lambda a: a[a > 2])(x))
attempt("argmax", lambda: vmap(lambda a: a.argmax())(x))
attempt("float", lambda: vmap(lambda a: float(a.sum()))(x))
attempt("all None", lambda: vmap(torch.sin, in_dims=(None,))(x))
attempt("dict in_dims", lambda: vmap(lambda d: d["a"], in_dims=({"a": 0, "b": 0},))({"a": x}))
attempt("list in_dims", lambda: vmap(torch.sin, in_dims=[0])(x))
attempt("out_dims None, batched", lambda: vmap(torch.sin, out_dims=None)(x))
attempt("out_dims None, unbatched", lambda: vmap(lambda a: torch.ones(2), out_dims=None)(x))
attempt("mul_ into unbatched", lambda: vmap(lambda a: torch.ones(3).mul_(a))(x))
attempt("copy_ into unbatched", lambda: vmap(lambda a: torch.ones(3).copy_(a))(x))
vmap(lambda a: print(a) or a)(x)
attempt("torch.argmax", lambda: vmap(torch.argmax)(x))
attempt("torch.argmin dim", lambda: vmap(lambda a: torch.argmin(a, 0))(x))
attempt("torch.all", lambda: vmap(lambda a: torch.all(a > 1))(x))
attempt("any dim", lambda: vmap(lambda a: (a > 1).any(0))(x))
attempt("equal", lambda: vmap(lambda a: torch.equal(a, a))(x))
attempt("allclose", lambda: vmap(lambda a: torch.allclose(a, a))(x))
