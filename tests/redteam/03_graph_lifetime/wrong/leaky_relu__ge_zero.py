# mistake: the mask is x >= 0, so at exactly 0 the derivative is 1 instead of negative_slope
# expect: 0 points for leaky_relu
class LeakyReLU(Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        mask = x >= 0
        ctx.negative_slope = negative_slope
        ctx.save_for_backward(mask)
        return torch.where(mask, x, x * negative_slope)

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return torch.where(mask, grad, grad * ctx.negative_slope), None
