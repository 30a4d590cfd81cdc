# The textbook formula without subtracting the maximum: exp(1000) overflows to inf, exp(-1000)
# underflows to 0, and the log of either is not the answer.
class LogSumExp(Function):
    @staticmethod
    def forward(ctx, x, b, dim):
        weights = torch.ones_like(x) if b is None else b
        out = (weights * x.exp()).sum(dim).log()
        ctx.dim = dim
        ctx.save_for_backward(x, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, b, out = ctx.saved_tensors
        grad, out = grad.unsqueeze(ctx.dim), out.unsqueeze(ctx.dim)
        grad_x = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_x = grad * ((x if b is None else x + b.log()) - out).exp()
        if b is not None and ctx.needs_input_grad[1]:
            grad_b = grad * (x - out).exp()
        return grad_x, grad_b, None
