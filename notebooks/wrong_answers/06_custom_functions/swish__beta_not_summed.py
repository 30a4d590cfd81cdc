# Returns the gradient for a tensor beta in x's shape, not summed to beta's shape (a learnable scalar
# slope would get a gradient per element of x).
class Swish(Function):
    @staticmethod
    def forward(ctx, x, beta):
        is_tensor = isinstance(beta, torch.Tensor)
        ctx.save_for_backward(x, beta if is_tensor else None)
        ctx.number = None if is_tensor else beta
        return x * torch.sigmoid(beta * x)

    @staticmethod
    def backward(ctx, grad):
        x, beta_tensor = ctx.saved_tensors
        beta = ctx.number if beta_tensor is None else beta_tensor
        s = torch.sigmoid(beta * x)
        slope = s * (1 - s)
        grad_x = grad * (s + beta * x * slope)
        if beta_tensor is None:
            return grad_x, None
        return grad_x, grad * x * x * slope
