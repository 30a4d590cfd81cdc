# Computes backward in numpy under @once_differentiable: first derivatives are right, a second
# differentiation is an error.
from chibigrad.autograd import once_differentiable


class Swish(Function):
    @staticmethod
    def forward(ctx, x, beta):
        is_tensor = isinstance(beta, torch.Tensor)
        ctx.save_for_backward(x, beta if is_tensor else None)
        ctx.number = None if is_tensor else beta
        return x * torch.sigmoid(beta * x)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        x, beta_tensor = ctx.saved_tensors
        xs, g = x.detach().numpy(), grad.detach().numpy()
        beta = ctx.number if beta_tensor is None else beta_tensor.detach().numpy()
        s = 1 / (1 + np.exp(-beta * xs))
        slope = s * (1 - s)
        grad_x = torch.tensor(g * (s + beta * xs * slope), dtype=x.dtype)
        if beta_tensor is None:
            return grad_x, None
        return grad_x, torch.tensor(g * xs * xs * slope, dtype=x.dtype).sum_to_size(beta_tensor.shape)
