# mistake: returns the gradients in the broadcast (output) shape, relying on the engine to sum them
# expect: 0 points for hypot
class Hypot(Function):
    @staticmethod
    def forward(ctx, a, b):
        out = (a * a + b * b).sqrt()
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        return grad * a / out, grad * b / out
