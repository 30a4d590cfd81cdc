# mistake: log(sum(b * exp(x))) directly, without subtracting the maximum: overflows to inf for large x
# expect: 0 points for logsumexp
class LogSumExp(Function):
    @staticmethod
    def forward(ctx, x, b, dim):
        w = x.exp() if b is None else b * x.exp()
        out = w.sum(dim).log()
        ctx.dim = dim
        ctx.save_for_backward(x, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, b, out = ctx.saved_tensors
        o, g = out.unsqueeze(ctx.dim), grad.unsqueeze(ctx.dim)
        e = (x - o).exp()
        gx = (g * e if b is None else g * b * e) if ctx.needs_input_grad[0] else None
        gb = g * e if b is not None and ctx.needs_input_grad[1] else None
        return gx, gb, None
