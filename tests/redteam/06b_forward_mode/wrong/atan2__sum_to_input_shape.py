# mistake: sums each tangent term back to its input's shape, as backward does, instead of giving the
#   output's shape
# expect: 0 points for atan2
class Atan2(Function):
    @staticmethod
    def forward(ctx, y, x):
        out = torch.tensor(np.arctan2(y.detach().numpy(), x.detach().numpy()))
        ctx.save_for_backward(y, x)
        ctx.save_for_forward(y, x)
        return out

    @staticmethod
    def backward(ctx, grad):
        y, x = ctx.saved_tensors
        r2 = x * x + y * y
        return (grad * x / r2).sum_to_size(y.shape), (-grad * y / r2).sum_to_size(x.shape)

    @staticmethod
    def jvp(ctx, y_t, x_t):
        y, x = ctx.saved_tensors
        r2 = x * x + y * y
        return (y_t * x / r2).sum_to_size(y.shape) - (x_t * y / r2).sum_to_size(x.shape)
