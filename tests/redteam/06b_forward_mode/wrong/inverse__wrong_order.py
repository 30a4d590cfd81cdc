# mistake: multiplies in the wrong order, -A_t @ Y @ Y, as if matrix products commuted
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
        return -(A_t @ Y @ Y)
