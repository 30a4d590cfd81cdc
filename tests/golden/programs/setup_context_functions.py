# Custom Functions in the style PyTorch's documentation now recommends: forward without ctx, then
# setup_context(ctx, inputs, output); gradcheck on them, defaults and keywords, and a mistake.
import torch
from golden_helpers import attempt


class MyCube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        result = x ** 3
        dx = 3 * x ** 2
        return result, dx

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        return grad_output * dx + grad_dx * 6 * x


x = torch.tensor([1.0, 2.0], requires_grad=True)
r, dx = MyCube.apply(x)
print(r, dx, type(r.grad_fn).__name__)
r.sum().backward()
print(x.grad)
x.grad = None
(g,) = torch.autograd.grad(MyCube.apply(x)[1].sum(), x)
print("through dx", g)
x64 = torch.tensor([0.5, -1.5, 2.0], dtype=torch.float64, requires_grad=True)
print("gradcheck", torch.autograd.gradcheck(lambda t: MyCube.apply(t)[0], (x64,)))


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(x, factor=2.0):
        return x * factor

    @staticmethod
    def setup_context(ctx, inputs, output):
        print("inputs", inputs)
        ctx.factor = inputs[1]

    @staticmethod
    def backward(ctx, g):
        return g * ctx.factor, None


Scale.apply(x, factor=3.0).sum().backward()
print(x.grad)
Scale.apply(x).sum().backward()
print(x.grad)
with torch.no_grad():
    print("no_grad", Scale.apply(x))


class Clamp01(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x.clamp(0, 1), (x > 0) & (x < 1)

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, inside = output
        ctx.mark_non_differentiable(inside)
        ctx.save_for_backward(inside)

    @staticmethod
    def backward(ctx, g, _):
        (inside,) = ctx.saved_tensors
        return g * inside


y, inside = Clamp01.apply(torch.tensor([-0.5, 0.5, 1.5], requires_grad=True))
print(y, inside, inside.requires_grad)


class Forgot(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g * 2


attempt("ctx in forward and setup_context", lambda: Forgot.apply(x))
