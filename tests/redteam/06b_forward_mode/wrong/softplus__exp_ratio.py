# mistake: the derivative as exp(x) / (1 + exp(x)), which is inf / inf = nan for large x
# expect: 0 points for softplus
class Softplus(Function):
    @staticmethod
    def forward(ctx, x):
        out = x.clamp(min=0) + (-x.abs()).exp().log1p()
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return out

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.sigmoid()

    @staticmethod
    def jvp(ctx, x_t):
        (x,) = ctx.saved_tensors
        return x_t * x.exp() / (1 + x.exp())
