# Sums start's and end's gradients back to their shapes but forgets the weight's.
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
        if weight is None:
            w = ctx.number
            return (grad * (1 - w)).sum_to_size(start.shape), (grad * w).sum_to_size(end.shape), None
        return ((grad * (1 - weight)).sum_to_size(start.shape), (grad * weight).sum_to_size(end.shape),
                grad * (end - start))
