# mistake: always returns both gradients, ignoring ctx.needs_input_grad (target rarely needs one)
# expect: 0 points for logcosh
import math


class LogCosh(Function):
    @staticmethod
    def forward(ctx, pred, target, reduction):
        d = pred - target
        a = d.abs()
        loss = a + (-2 * a).exp().log1p() - math.log(2)
        ctx.reduction, ctx.n = reduction, d.numel()
        ctx.save_for_backward(d)
        return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss

    @staticmethod
    def backward(ctx, grad):
        (d,) = ctx.saved_tensors
        g = grad / ctx.n if ctx.reduction == "mean" else grad
        return d.tanh() * g, -d.tanh() * g, None
