# Treats the norm as a constant: x_t / n, missing the change of the norm itself.
class Normalize(Function):
    @staticmethod
    def forward(ctx, x, dim):
        norm = (x * x).sum(dim, keepdim=True).sqrt()
        out = x / norm
        ctx.dim = dim
        ctx.save_for_backward(out, norm)
        ctx.save_for_forward(out, norm)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, norm = ctx.saved_tensors
        return (grad - out * (grad * out).sum(ctx.dim, keepdim=True)) / norm, None

    @staticmethod
    def jvp(ctx, x_t, dim_t):
        out, norm = ctx.saved_tensors
        return x_t / norm
