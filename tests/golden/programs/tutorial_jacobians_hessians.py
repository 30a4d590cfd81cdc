# requires: func.vmap
# PyTorch's tutorial "Jacobians, Hessians, hvp, vhp, and more: composing function transforms"
# (torch.func), transcribed with fixed data instead of torch.randn, smaller sizes, without its timings, and in
# float64 (in float32 its allclose checks compare the last bits of two ways of summing).
import warnings
from functools import partial

import torch
import torch.nn.functional as F
from torch.func import hessian, jacfwd, jacrev, jvp, vjp, vmap, grad

warnings.filterwarnings("ignore", category=DeprecationWarning)  # PyTorch's jacfwd: "`torch.jit.script` is deprecated"
torch.set_default_dtype(torch.float64)


def fixed(*shape, phase=0.0):
    """Fixed numbers in [-1, 1] in place of torch.randn."""
    n = 1
    for s in shape:
        n *= s
    return (torch.arange(n) * 0.37 + phase).sin().reshape(shape)


def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


D = 16
weight = fixed(D, D)
bias = fixed(D, phase=1.0)
x = fixed(D, phase=2.0)

# Computing the Jacobian row by row
xp = x.clone().requires_grad_()
unit_vectors = torch.eye(D)


def compute_jac(xp):
    jacobian_rows = [torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0] for vec in unit_vectors]
    return torch.stack(jacobian_rows)


jacobian = compute_jac(xp)
print(jacobian.shape)
print(jacobian[0])

# vmap over vjp: the same Jacobian in one batched pass
_, vjp_fn = vjp(partial(predict, weight, bias), x)
ft_jacobian, = vmap(vjp_fn)(unit_vectors)
print(torch.allclose(ft_jacobian, jacobian))

# jacrev
ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)
print(torch.allclose(ft_jacobian, jacobian))
ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
print(ft_jac_weight.shape, ft_jac_bias.shape)
ref_weight = jacrev(lambda weight: predict(weight, bias, x))(weight)
print(torch.allclose(ft_jac_weight, ref_weight))

# jacfwd against jacrev, on a tall and a wide function
Din, Dout = 8, 64
weight = fixed(Dout, Din)
bias = fixed(Dout, phase=1.0)
x = fixed(Din, phase=2.0)
using_fwd = jacfwd(predict, argnums=2)(weight, bias, x)
using_bwd = jacrev(predict, argnums=2)(weight, bias, x)
print(using_fwd.shape, torch.allclose(using_fwd, using_bwd, atol=1e-6))
print(using_fwd[:2].round(decimals=4))

# Hessians: hessian, jacfwd(jacfwd), jacrev(jacrev)
Din, Dout = 12, 4
weight = fixed(Dout, Din)
bias = fixed(Dout, phase=1.0)
x = fixed(Din, phase=2.0)
hess_api = hessian(predict, argnums=2)(weight, bias, x)
hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
print(hess_api.shape, torch.allclose(hess_api, hess_fwdfwd, atol=1e-6), torch.allclose(hess_api, hess_revrev, atol=1e-6))
print(hess_api[0, :3, :3].round(decimals=4))

# Batch Jacobian and batch Hessian
batch_size, Din, Dout = 8, 5, 6
weight = fixed(Dout, Din)
bias = fixed(Dout, phase=1.0)
x = fixed(batch_size, Din, phase=2.0)
compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
batch_jacobian0 = compute_batch_jacobian(weight, bias, x)


def predict_with_output_summed(weight, bias, x):
    return predict(weight, bias, x).sum(0)


batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x).movedim(1, 0)
print(batch_jacobian0.shape, torch.allclose(batch_jacobian0, batch_jacobian1, atol=1e-6))
compute_batch_hessian = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))
batch_hess = compute_batch_hessian(weight, bias, x)
print(batch_hess.shape)
print(batch_hess[1, 0, :2].round(decimals=4))


# Hessian-vector products: forward over reverse, and reverse over reverse
def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


def f(x):
    return x.sin().sum()


x = fixed(64, phase=0.5)
tangent = fixed(64, phase=1.0)
result = hvp(f, (x,), (tangent,))


def hvp_revrev(f, primals, tangents):
    _, vjp_fn = vjp(grad(f), *primals)
    return vjp_fn(*tangents)


result_hvp_revrev = hvp_revrev(f, (x,), (tangent,))
print(torch.allclose(result, result_hvp_revrev[0]))
print(result[:4])

torch.set_default_dtype(torch.float32)  # (the golden programs share one interpreter)
