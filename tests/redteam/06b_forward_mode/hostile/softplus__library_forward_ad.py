# attack: no rule written: jvp re-runs softplus out of built-in operations on a fresh dual inside a
#   nested fwAD.dual_level, so the library's forward mode computes the tangent (the finished
#   implementation answers the exercise)
# expect: 0 points for softplus; batch continues
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
        with fwAD.dual_level():
            dual = fwAD.make_dual(x.detach(), x_t.detach())
            out = dual.clamp(min=0) + (-dual.abs()).exp().log1p()
            return fwAD.unpack_dual(out).tangent
