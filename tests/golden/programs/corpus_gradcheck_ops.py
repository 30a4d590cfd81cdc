# Follows the gradcheck / gradgradcheck documentation and testing tutorials: float64 inputs with
# requires_grad, checking built-in compositions and a custom Function, raise_exception=False for a
# wrong backward, and the warning for float32 inputs.
import torch
from torch.autograd import gradcheck, gradgradcheck

x = torch.tensor([[0.3, -1.2, 0.7], [1.5, 0.2, -0.4]], dtype=torch.double, requires_grad=True)
w = torch.tensor([[0.5, -0.1], [0.2, 0.8], [-0.6, 0.3]], dtype=torch.double, requires_grad=True)

print(gradcheck(lambda a, b: torch.tanh(a @ b).sum(dim=1), (x, w)))
print(gradcheck(lambda a: torch.softmax(a, dim=1), (x,)))
print(gradcheck(lambda a: (a.sigmoid() * a.exp()).mean(), (x,)))
print(gradgradcheck(lambda a, b: torch.tanh(a @ b), (x, w)))
print(gradgradcheck(lambda a: a.pow(3).sum(), (x,)))
print(gradcheck(torch.nn.functional.mse_loss, (x, torch.zeros(2, 3, dtype=torch.double))))


class WrongSquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * a  # should be 2 * a


print(gradcheck(WrongSquare.apply, (x,), raise_exception=False))
try:
    gradcheck(WrongSquare.apply, (x,))
except Exception as e:
    print(type(e).__name__, str(e).splitlines()[0])


class RightSquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return 2 * a * grad


print(gradcheck(RightSquare.apply, (x,)), gradgradcheck(RightSquare.apply, (x,)))
x32 = torch.tensor([0.5, 1.5], requires_grad=True)
print(gradcheck(lambda a: a * 2, (x32,), eps=1e-3, atol=1e-2, raise_exception=False))
