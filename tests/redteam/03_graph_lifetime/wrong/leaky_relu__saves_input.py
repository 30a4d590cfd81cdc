# mistake: saves the input x for backward (the usual way) instead of the boolean mask, so 8 bytes an
#   element stay alive instead of 1
# expect: 0 points for leaky_relu
class LeakyReLU(Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        ctx.negative_slope = negative_slope
        ctx.save_for_backward(x)
        return torch.where(x > 0, x, x * negative_slope)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return torch.where(x > 0, grad, grad * ctx.negative_slope), None
