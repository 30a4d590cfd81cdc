# mistake: keeps the inputs as ctx attributes instead of ctx.save_for_backward, so nothing is freed
#   and a second backward silently works
# expect: 0 points for hypot
class Hypot(Function):
    @staticmethod
    def forward(ctx, a, b):
        out = (a * a + b * b).sqrt()
        ctx.a, ctx.b, ctx.out = a, b, out
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.a, ctx.b, ctx.out
        return (grad * a / out).sum_to_size(a.shape), (grad * b / out).sum_to_size(b.shape)
