# Double backward with custom Functions, after PyTorch's "Double Backward with Custom Functions" tutorial
# (https://pytorch.org/tutorials/intermediate/custom_function_double_backward_tutorial.html): Square saving inputs,
# Exp saving outputs, Sinh saving intermediate results via ctx.mark_non_differentiable-free save_for_backward of
# expx/expnegx computed in forward, each checked by gradcheck and gradgradcheck in float64.
import torch


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return grad_out * 2 * x


class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        result, = ctx.saved_tensors
        return result * grad_out


class Sinh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        expx = torch.exp(x)
        expnegx = torch.exp(-x)
        ctx.save_for_backward(expx, expnegx)
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
        expx, expnegx = ctx.saved_tensors
        grad_input = grad_out * (expx + expnegx) / 2
        grad_input += _grad_out_exp * expx
        grad_input -= _grad_out_negexp * expnegx
        return grad_input


def sinh(x):
    return Sinh.apply(x)[0]


x = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
x = torch.sin(torch.arange(9, dtype=torch.double) * 0.8).reshape(3, 3).requires_grad_()
print(torch.autograd.gradcheck(Square.apply, x))
print(torch.autograd.gradgradcheck(Square.apply, x))
print(torch.autograd.gradcheck(Exp.apply, x))
print(torch.autograd.gradgradcheck(Exp.apply, x))
print(torch.autograd.gradcheck(sinh, x))
print(torch.autograd.gradgradcheck(sinh, x))
out = Square.apply(x)
g, = torch.autograd.grad(out.sum(), x, create_graph=True)
print(g.grad_fn)
gg, = torch.autograd.grad(g.sum(), x)
print(gg)
y = sinh(x)
print(y.grad_fn.__class__.__name__, y.grad_fn.next_functions)
