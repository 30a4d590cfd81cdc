# The gradient for x forgets the weights: it is the plain softmax exp(x - out), not b * exp(x - out).
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
        share = (x - out).exp()
        grad_b = grad * share if b is not None and ctx.needs_input_grad[1] else None
        return grad * share, grad_b, None
