# attack: make the rule never run: Normalize.apply is replaced by built-in operations (x / norm), whose
#   tangents the library computes; the jvp written here is wrong (it ignores the norm's change)
# expect: 0 points for normalize (the tests must exercise the student's jvp); batch continues
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


Normalize.apply = staticmethod(lambda x, dim: x / (x * x).sum(dim, keepdim=True).sqrt())
