# Backward forgets that "mean" divides by the number of elements: the gradient of the mean loss is
# that of the sum.
class LogCosh(Function):
    @staticmethod
    def forward(ctx, pred, target, reduction):
        ctx.reduction = reduction
        ctx.save_for_backward(pred, target)
        d = (pred - target).abs()
        losses = d + ((d * -2).exp() + 1).log() - np.log(2)
        if reduction == "mean":
            return losses.mean()
        return losses.sum() if reduction == "sum" else losses

    @staticmethod
    def backward(ctx, grad):
        pred, target = ctx.saved_tensors
        grad_pred = grad * (pred - target).tanh()
        return (grad_pred if ctx.needs_input_grad[0] else None,
                -grad_pred if ctx.needs_input_grad[1] else None, None)
