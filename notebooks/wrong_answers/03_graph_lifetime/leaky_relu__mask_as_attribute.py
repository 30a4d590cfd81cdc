# Keeps the mask as a ctx attribute: the engine cannot free it, so it outlives backward and a second
# backward silently works instead of raising.
class LeakyReLU(Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        ctx.mask = x > 0
        ctx.negative_slope = negative_slope
        return torch.where(ctx.mask, x, x * negative_slope)

    @staticmethod
    def backward(ctx, grad):
        return torch.where(ctx.mask, grad, grad * ctx.negative_slope), None
