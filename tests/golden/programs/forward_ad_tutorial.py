# torch.autograd.forward_ad as PyTorch's "Forward-mode Automatic Differentiation" tutorial uses it:
# dual_level, make_dual, unpack_dual; a module's parameters made dual through functional_call; a custom
# Function with jvp and save_for_forward; the errors a first try runs into.
import warnings

import torch
import torch.autograd.forward_ad as fwAD
import torch.nn as nn
import torch.nn.functional as F
# (PyTorch's own torch.func code warns about its use of torch.jit; not this program's business)
warnings.filterwarnings("ignore", message="`torch.jit.script` is deprecated")
from torch.func import functional_call
from golden_helpers import attempt


def fn(x, y):
    return x ** 2 + y ** 2


primal = torch.linspace(-1.0, 1.0, 6).reshape(2, 3)
tangent = torch.linspace(0.5, 1.5, 6).reshape(2, 3)
y = torch.full((2, 3), 0.5)

with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    assert fwAD.unpack_dual(dual_input).tangent is tangent
    dual_output = fn(dual_input, y)
    jvp = fwAD.unpack_dual(dual_output).tangent
    print("jvp", jvp)
    print("primal out", fwAD.unpack_dual(dual_output).primal)
    print("namedtuple", type(fwAD.unpack_dual(dual_output)).__name__, fwAD.unpack_dual(dual_output)._fields)
    print("no tangent", fwAD.unpack_dual(y).tangent)
    print("a dual prints its tangent", dual_input, (dual_input * 2)[0, 0])
print("after the level", fwAD.unpack_dual(dual_output).tangent)

# A model's directional derivative along its parameters (the tutorial's "Usage with Modules").
model = nn.Linear(3, 2)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
    model.bias.copy_(torch.tensor([0.05, -0.05]))
inputs = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]])
params = {name: p for name, p in model.named_parameters()}
tangents = {name: torch.ones_like(p) for name, p in params.items()}
with fwAD.dual_level():
    dual_params = {name: fwAD.make_dual(p, tangents[name]) for name, p in params.items()}
    out = functional_call(model, dual_params, (inputs,))
    print("module jvp", fwAD.unpack_dual(out).tangent)
    loss = F.mse_loss(torch.tanh(out), torch.zeros(2, 2))
    print("loss jvp", round(fwAD.unpack_dual(loss).tangent.item(), 5))


class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        result = torch.exp(foo)
        ctx.result = result  # for jvp; a forward-only Function keeps it on ctx
        return result

    @staticmethod
    def jvp(ctx, gI):
        gO = gI * ctx.result
        del ctx.result
        return gO


k_tangents = []


class Scaled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_forward(x)
        ctx.save_for_backward(x)
        ctx.k = k
        return x.sin() * k

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos() * ctx.k, None

    @staticmethod
    def jvp(ctx, x_t, k_t):
        (x,) = ctx.saved_tensors
        k_tangents.append(k_t)
        return x_t * x.cos() * ctx.k


x = torch.tensor([0.0, 0.5, 1.0], dtype=torch.double, requires_grad=True)
with fwAD.dual_level():
    print("custom exp", fwAD.unpack_dual(Fn.apply(fwAD.make_dual(x, torch.ones_like(x)))).tangent)
    out = Scaled.apply(fwAD.make_dual(x, torch.full_like(x, 2.0)), 3.0)
    print("custom scaled", fwAD.unpack_dual(out).tangent, "k's tangent:", k_tangents[0])
    out.sum().backward()
print("reverse too", x.grad)
print("gradcheck forward", torch.autograd.gradcheck(Fn.apply, (x.detach().requires_grad_(),), check_forward_ad=True,
                                                    check_backward_ad=False))
print("gradcheck both", torch.autograd.gradcheck(lambda t: Scaled.apply(t, 3.0), (x,), check_forward_ad=True))


class NoJvp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


attempt("no level", lambda: fwAD.make_dual(primal, tangent))
with fwAD.dual_level():
    attempt("nested", lambda: fwAD.dual_level().__enter__())
    attempt("wrong size", lambda: fwAD.make_dual(primal, torch.ones(3)))
    attempt("integer", lambda: fwAD.make_dual(torch.arange(3), torch.arange(3)))
    attempt("no jvp", lambda: NoJvp.apply(fwAD.make_dual(primal, tangent)))
