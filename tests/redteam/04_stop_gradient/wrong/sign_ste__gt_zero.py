# mistake: +1 where x > 0 (0 goes to -1), the usual sign convention, not the binary one
# expect: 0 points for sign_ste
class SignSTE(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.where(x > 0, torch.ones_like(x), -torch.ones_like(x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return torch.where(x.abs() <= 1, grad, torch.zeros_like(grad))
