# Seed 001: a custom autograd Function (MySiLU) with save_for_backward.
import torch


class MySiLU(torch.autograd.Function):
    """SiLU (Swish) activation: x * sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        sigmoid_x = torch.sigmoid(x)
        ctx.save_for_backward(x, sigmoid_x)
        return x * sigmoid_x

    @staticmethod
    def backward(ctx, grad_output):
        x, sigmoid_x = ctx.saved_tensors
        grad_input = grad_output * (sigmoid_x * (1 + x * (1 - sigmoid_x)))
        return grad_input


x = torch.tensor([-2.0, -0.5, 0.0, 0.5, 2.0], requires_grad=True)
y = MySiLU.apply(x)
print(y)
print(type(y.grad_fn).__name__)
y.sum().backward()
print(x.grad)
try:
    y.sum().backward()
except RuntimeError as e:
    print(e)

# Verify correctness with gradcheck (float64 input; values are random, only the verdict is printed)
from torch.autograd import gradcheck

x = torch.randn(5, dtype=torch.float64, requires_grad=True)
assert gradcheck(MySiLU.apply, (x,), eps=1e-6)
print(gradcheck(MySiLU.apply, (x,), eps=1e-6, atol=1e-4))
