# torch.func as its documentation and the "Jacobians, Hessians, hvp, vhp, and more" tutorial use it:
# grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, functional_call; composition; errors.
import warnings

import torch
import torch.nn as nn

from torch.func import functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp

# (PyTorch's own torch.func code warns about its use of torch.jit; not this program's business)
warnings.filterwarnings("ignore", message="`torch.jit.script` is deprecated")
from golden_helpers import attempt

x = torch.tensor([1.0, 2.0, 3.0])


def f(x):
    return (x.sin() * x).sum()


print("grad", grad(f)(x), x.requires_grad)
print("grad of grad", grad(grad(lambda t: t ** 3))(torch.tensor(2.0)))
print("argnums", grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, x + 1))
print("second arg", grad(lambda a, b: (a * b.exp()).sum(), argnums=1)(x, x / 10))
print("grad_and_value", grad_and_value(f)(x))
print("has_aux", grad(lambda t: ((t ** 2).sum(), t.mean()), has_aux=True)(x))
out, fn = vjp(lambda t: t.sin(), x)
print("vjp", out, fn(torch.ones(3)))
print("jvp", jvp(lambda t: t.sin(), (x,), (torch.ones(3),)))
print("jacrev", jacrev(lambda t: t.sin())(x))
print("jacfwd", jacfwd(lambda t: t.sin())(x))
print("jacrev matrix", jacrev(lambda t: t @ torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))(x))
print("hessian", hessian(lambda t: (t ** 3).sum())(x))
print("hessian mixed", hessian(lambda t: (t[0] * t[1] * t[2]).sum() + t.pow(2).sum())(x))

model = nn.Linear(3, 1)
params = {k: torch.ones_like(v) for k, v in model.named_parameters()}
print("functional_call", functional_call(model, params, (x,)), model.weight.shape)
g = grad(lambda p, t: functional_call(model, p, (t,)).sum())(params, x)
print("per-parameter grads", g)
print("model untouched", [n for n, _ in model.named_parameters()], model.weight.requires_grad)


def loss(p, t, target):
    return ((functional_call(model, p, (t,)) - target) ** 2).mean()


batch = torch.tensor([[1.0, 0.0, 2.0], [0.5, -1.0, 1.0]])
print("loss grad", grad(loss)(params, batch, torch.tensor([[1.0], [0.0]])))

w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
gw = grad(lambda t: (t * w).sum())(x)
print("captured weight", gw, gw.requires_grad)
gw.sum().backward()
print("through it", w.grad)

attempt("vector output", lambda: grad(lambda t: t * 2)(x))
attempt("not a tensor", lambda: grad(lambda t: 3.0)(x))
attempt("integer input", lambda: grad(f)(torch.tensor([1, 2])))
