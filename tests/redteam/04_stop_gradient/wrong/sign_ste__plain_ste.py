# mistake: the chapter's plain straight-through estimator: the gradient passes everywhere, also where
#   |x| > 1
# expect: 0 points for sign_ste
class SignSTE(Function):
    @staticmethod
    def forward(ctx, x):
        return torch.where(x >= 0, torch.ones_like(x), -torch.ones_like(x))

    @staticmethod
    def backward(ctx, grad):
        return grad
