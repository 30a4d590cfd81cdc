# The mask is x >= 0: the derivative at exactly 0 comes out as 1 instead of negative_slope (PyTorch's).
class LeakyReLU(Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        mask = x >= 0
        ctx.save_for_backward(mask)
        ctx.negative_slope = negative_slope
        return torch.where(mask, x, x * negative_slope)

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return torch.where(mask, grad, grad * ctx.negative_slope), None
