# Follows PyTorch's "Extending torch.autograd" notes: LinearFunction with the separate setup_context
# style, MulConstant with a non-tensor argument, a function returning two outputs, needs_input_grad,
# and checking it with gradcheck in float64.
import torch
from torch.autograd import Function, gradcheck


class LinearFunction(Function):
    @staticmethod
    def forward(input, weight, bias):
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def setup_context(ctx, inputs, output):
        input, weight, bias = inputs
        ctx.save_for_backward(input, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


linear = LinearFunction.apply
input = torch.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], dtype=torch.double, requires_grad=True)
weight = torch.tensor([[0.1, 0.2, 0.3], [-0.4, 0.5, -0.6]], dtype=torch.double, requires_grad=True)
bias = torch.tensor([0.01, -0.02], dtype=torch.double, requires_grad=True)
out = linear(input, weight, bias)
print(out, out.grad_fn)
out.sum().backward()
print(input.grad, weight.grad, bias.grad)
test = gradcheck(linear, (input, weight, bias), eps=1e-6, atol=1e-4)
print(test)
print(gradcheck(linear, (input, weight, None), eps=1e-6, atol=1e-4))


class MulConstant(Function):
    @staticmethod
    def forward(tensor, constant):
        return tensor * constant

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, constant = inputs
        ctx.constant = constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


x = torch.tensor([1.0, 2.0], requires_grad=True)
y = MulConstant.apply(x, 5.5)
y.backward(torch.tensor([1.0, 0.1]))
print(y, x.grad)


# the older style: forward takes ctx
class Exp(Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result


x = torch.tensor([0.0, 1.0], requires_grad=True)
e = Exp.apply(x)
e.sum().backward()
print(e, x.grad, e.grad_fn.name())


# two outputs, one of them unused in the loss: its gradient arrives as zeros
class SplitScale(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        print("g1", g1, "g2", g2)
        return g1 * 2 + g2 * 3


x = torch.tensor([1.0, -1.0], requires_grad=True)
p, q = SplitScale.apply(x)
p.sum().backward()
print(x.grad, p.grad_fn is q.grad_fn)


# a wrong backward: the engine checks the number and shapes of the gradients
class BadGrad(Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g.sum()


try:
    BadGrad.apply(torch.ones(3, requires_grad=True)).sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)
