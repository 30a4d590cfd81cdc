# Saves sigmoid(beta * x), computed in forward, as the chapter's MySiLU does: first derivatives are
# right, but to create_graph the saved sigmoid is a constant, so second derivatives are wrong.
class Swish(Function):
    @staticmethod
    def forward(ctx, x, beta):
        s = torch.sigmoid(beta * x)
        is_tensor = isinstance(beta, torch.Tensor)
        ctx.save_for_backward(x, s, beta if is_tensor else None)
        ctx.number = None if is_tensor else beta
        return x * s

    @staticmethod
    def backward(ctx, grad):
        x, s, beta_tensor = ctx.saved_tensors
        beta = ctx.number if beta_tensor is None else beta_tensor
        slope = s * (1 - s)
        grad_x = grad * (s + beta * x * slope)
        if beta_tensor is None:
            return grad_x, None
        return grad_x, (grad * x * x * slope).sum_to_size(beta_tensor.shape)
