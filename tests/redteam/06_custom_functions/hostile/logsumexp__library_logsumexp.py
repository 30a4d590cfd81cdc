# attack: the forward and backward call chibigrad's own logsumexp and softmax (which the exercise
#   forbids: "write your own and don't call it"), through names looked up with getattr so a text
#   search of the cell does not see them
# expect: 0 points for logsumexp; batch continues
_lse = getattr(torch, "log" + "sumexp")
_softmax = getattr(torch, "soft" + "max", None)


class LogSumExp(Function):
    @staticmethod
    def forward(ctx, x, b, dim):
        z = x if b is None else x + b.log()
        out = _lse(z, dim)
        ctx.dim = dim
        ctx.save_for_backward(x, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, b, out = ctx.saved_tensors
        dim = ctx.dim
        o, g = out.unsqueeze(dim), grad.unsqueeze(dim)
        gx = gb = None
        if ctx.needs_input_grad[0]:
            gx = g * ((x if b is None else x + b.log()) - o).exp()
        if b is not None and ctx.needs_input_grad[1]:
            gb = g * (x - o).exp()
        return gx, gb, None
