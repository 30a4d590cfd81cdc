# mistake: treats the norm as a constant: y_t = x_t / n, forgetting that moving x changes its norm
# expect: 0 points for normalize
class Normalize(Function):
    @staticmethod
    def forward(ctx, x, dim):
        norm = (x * x).sum(dim, keepdim=True).sqrt()
        out = x / norm
        ctx.dim = dim
        ctx.save_for_backward(out, norm)
        ctx.save_for_forward(norm)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, norm = ctx.saved_tensors
        return (grad - out * (grad * out).sum(ctx.dim, keepdim=True)) / norm, None

    @staticmethod
    def jvp(ctx, x_t, dim_t):
        (norm,) = ctx.saved_tensors
        return x_t / norm
