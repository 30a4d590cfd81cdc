# torch.func on a small logistic regression, as its "Jacobians, Hessians, hvp, vhp, and more" tutorial
# builds things up: jacfwd against jacrev, Hessian-vector products by forward over reverse, by reverse
# over reverse and by torch.autograd.functional, truncated Newton steps (conjugate gradients that see the
# Hessian only through Hessian-vector products), and a Hessian through functional_call.
import warnings

import torch
import torch.nn as nn
from torch.autograd.functional import hvp as functional_hvp
# (PyTorch's own torch.func code warns about its use of torch.jit; not this program's business)
warnings.filterwarnings("ignore", message="`torch.jit.script` is deprecated")
from torch.func import functional_call, grad, hessian, jacfwd, jacrev, jvp, vjp

torch.set_default_dtype(torch.float64)
X = torch.tensor([[0.5, 1.0], [-1.0, 0.3], [1.5, -0.5], [0.2, 0.2], [-0.7, -1.2], [1.0, 1.0]])
t = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])


def loss(w):
    logits = X @ w[:2] + w[2]
    return nn.functional.binary_cross_entropy_with_logits(logits, t) + 0.05 * (w ** 2).sum()


w = torch.zeros(3)
print("jacfwd == jacrev", torch.allclose(jacfwd(lambda v: (X @ v[:2] + v[2]).sigmoid())(w),
                                         jacrev(lambda v: (X @ v[:2] + v[2]).sigmoid())(w)))
print("jacfwd shape", jacfwd(lambda v: (X @ v[:2] + v[2]).sigmoid())(w).shape)

v = torch.tensor([1.0, -2.0, 0.5])
_, hvp_fwd = jvp(grad(loss), (w,), (v,))
_, vjp_fn = vjp(grad(loss), w)
(hvp_rev,) = vjp_fn(v)
_, hvp_functional = functional_hvp(loss, w, v)
print("hvp forward over reverse", hvp_fwd)
print("agree", torch.allclose(hvp_fwd, hvp_rev), torch.allclose(hvp_fwd, hvp_functional))
print("hessian @ v", torch.allclose(hessian(loss)(w) @ v, hvp_fwd))



def newton_direction(w, g, iters=3):
    """H^-1 g by conjugate gradients, touching H only through Hessian-vector products (truncated Newton)."""
    hvp = lambda p: jvp(grad(loss), (w,), (p,))[1]  # noqa: E731
    x, r = torch.zeros_like(g), g.clone()
    p = r.clone()
    for _ in range(iters):
        Hp = hvp(p)
        alpha = (r @ r) / (p @ Hp)
        x, r_new = x + alpha * p, r - alpha * Hp
        p, r = r_new + (r_new @ r_new) / (r @ r) * p, r_new
    return x


for step in range(4):
    g = grad(loss)(w)
    d = newton_direction(w, g)
    print("newton", step, round(loss(w).item(), 8), "direction solves H d = g:",
          torch.allclose(hessian(loss)(w) @ d, g, atol=1e-10))
    w = w - d
print("gradient at the end", grad(loss)(w).abs().max().item() < 1e-8)

# The same through a module: the Hessian of the loss with respect to a layer's weight.
layer = nn.Linear(2, 1)
with torch.no_grad():
    layer.weight.fill_(0.1)
    layer.bias.fill_(0.0)


def module_loss(weight):
    out = functional_call(layer, {"weight": weight}, (X,)).squeeze(1)
    return ((out - t) ** 2).mean()


print("module hessian", hessian(module_loss)(layer.weight.detach()))
print("jvp of the module", jvp(module_loss, (layer.weight.detach(),), (torch.ones(1, 2),)))

torch.set_default_dtype(torch.float32)  # (the golden programs share one interpreter)
