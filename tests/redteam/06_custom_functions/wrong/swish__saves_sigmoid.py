# mistake: saves sigmoid(beta * x) in forward, as the chapter's MySiLU does: first derivatives are right,
#   the second derivative is silently wrong (s is a constant to double backward)
# expect: 0 points for swish
class Swish(Function):
    @staticmethod
    def forward(ctx, x, beta):
        b = beta if isinstance(beta, torch.Tensor) else torch.tensor(beta, dtype=x.dtype)
        s = (b * x).sigmoid()
        ctx.beta_is_tensor = isinstance(beta, torch.Tensor)
        ctx.save_for_backward(x, b, s)
        return x * s

    @staticmethod
    def backward(ctx, grad):
        x, b, s = ctx.saved_tensors
        gx = grad * (s + b * x * s * (1 - s))
        gb = (grad * x * x * s * (1 - s)).sum_to_size(b.shape) if ctx.beta_is_tensor else None
        return gx, gb
