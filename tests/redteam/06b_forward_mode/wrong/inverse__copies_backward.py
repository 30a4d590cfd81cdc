# mistake: copies backward's transposed formula, -Y^T @ A_t @ Y^T, into jvp
# expect: 0 points for inverse
class Inverse(Function):
    @staticmethod
    def forward(ctx, A):
        out = torch.tensor(np.linalg.inv(A.detach().numpy()))
        ctx.save_for_backward(out)
        ctx.save_for_forward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (Y,) = ctx.saved_tensors
        return -(Y.mT @ grad @ Y.mT)

    @staticmethod
    def jvp(ctx, A_t):
        (Y,) = ctx.saved_tensors
        return -(Y.mT @ A_t @ Y.mT)
