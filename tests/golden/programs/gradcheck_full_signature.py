# gradcheck and gradgradcheck with their full keyword signature, as test suites call them, and a backward that
# ignores its output gradient (PyTorch's 'backward not multiplied by grad_output').
import torch
from torch.autograd import gradcheck, gradgradcheck


class Shifted(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 2 if grad.any() else torch.ones_like(grad)  # wrong when the output gradient is undefined


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * 3 * x ** 2


x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
print(gradcheck(Cube.apply, (x,), eps=1e-6, atol=1e-4, nondet_tol=0.0, check_undefined_grad=True, fast_mode=True))
print(gradcheck(Cube.apply, (x,), check_grad_dtypes=True, check_batched_grad=False))
print(gradgradcheck(Cube.apply, (x,), check_undefined_grad=False, gen_non_contig_grad_outputs=True))
print(gradcheck(Shifted.apply, (x,), check_undefined_grad=False, raise_exception=False))
print(gradcheck(Shifted.apply, (x,), raise_exception=False))
try:
    gradcheck(Shifted.apply, (x,))
except RuntimeError as e:
    print(type(e).__name__, str(e).splitlines()[0])
