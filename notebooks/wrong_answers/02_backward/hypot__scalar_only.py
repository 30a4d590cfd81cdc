# Handles only the scalar case: math.hypot on Python floats is right for one number each, and fails
# (float() of a tensor with several elements) on tensors that broadcast.
import math


class Hypot(Function):
    @staticmethod
    def forward(ctx, a, b):
        out = torch.tensor(math.hypot(float(a), float(b)), dtype=a.dtype)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        return grad * a / out, grad * b / out
