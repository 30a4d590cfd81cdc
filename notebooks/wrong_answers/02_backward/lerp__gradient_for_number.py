# Returns a gradient for a weight that is a Python number: the engine rejects it.
class Lerp(Function):
    @staticmethod
    def forward(ctx, start, end, weight):
        is_tensor = isinstance(weight, torch.Tensor)
        ctx.save_for_backward(start, end, weight if is_tensor else None)
        ctx.number = None if is_tensor else weight
        return start + weight * (end - start)

    @staticmethod
    def backward(ctx, grad):
        start, end, weight = ctx.saved_tensors
        w = ctx.number if weight is None else weight
        g_weight = grad * (end - start)
        if weight is not None:
            g_weight = g_weight.sum_to_size(weight.shape)
        return (grad * (1 - w)).sum_to_size(start.shape), (grad * w).sum_to_size(end.shape), g_weight
