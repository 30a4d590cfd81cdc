# Saves only for backward and reads ctx.saved_tensors in jvp: in jvp that is what save_for_forward kept (nothing).
class Softplus(Function):
    @staticmethod
    def forward(ctx, x):
        out = x.clamp(min=0) + (-x.abs()).exp().log1p()
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.sigmoid()

    @staticmethod
    def jvp(ctx, x_t):
        (x,) = ctx.saved_tensors
        return x_t * x.sigmoid()
