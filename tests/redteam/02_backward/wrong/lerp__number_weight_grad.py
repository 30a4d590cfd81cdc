# mistake: always returns a gradient for weight, also when weight is a Python number (saved as a
#   tensor for convenience), which the engine rejects
# expect: 0 points for lerp
class Lerp(Function):
    @staticmethod
    def forward(ctx, start, end, weight):
        w = weight if isinstance(weight, torch.Tensor) else torch.tensor(float(weight))
        ctx.save_for_backward(start, end, w)
        return start + w * (end - start)

    @staticmethod
    def backward(ctx, grad):
        start, end, w = ctx.saved_tensors
        return ((grad * (1 - w)).sum_to_size(start.shape), (grad * w).sum_to_size(end.shape),
                (grad * (end - start)).sum_to_size(w.shape))
