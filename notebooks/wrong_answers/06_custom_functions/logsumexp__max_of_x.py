# Subtracts the maximum of x, not of x + log b: when the largest x has weight 0, every remaining term
# underflows to 0 and the result is -inf instead of a finite number.
class LogSumExp(Function):
    @staticmethod
    def forward(ctx, x, b, dim):
        top = x.amax(dim, keepdim=True)
        terms = (x - top).exp() if b is None else b * (x - top).exp()
        out = (terms.sum(dim, keepdim=True).log() + top).squeeze(dim)
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
