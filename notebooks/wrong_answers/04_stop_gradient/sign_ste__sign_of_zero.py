# Uses x.sign(), which is 0 at 0: a binary weight of exactly 0 stays 0 instead of +1.
class SignSTE(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sign()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return torch.where(x.abs() <= 1, grad, torch.zeros_like(grad))
