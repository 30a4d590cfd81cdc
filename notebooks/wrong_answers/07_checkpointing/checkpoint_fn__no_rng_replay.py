# Recomputes without restoring the random generator's state: dropout draws a new mask in backward,
# so the gradients belong to a different network than the one that produced the loss.
class CheckpointFn(Function):
    @staticmethod
    def forward(ctx, module, x, *params):
        ctx.module = module
        ctx.save_for_backward(x)
        return module(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        needs_x, needs_params = ctx.needs_input_grad[1], ctx.needs_input_grad[2:]
        inner = x.detach().requires_grad_(needs_x)
        with torch.enable_grad():
            out = ctx.module(inner)
        params = [p for p, needed in zip(ctx.module.parameters(), needs_params) if needed]
        wanted = ([inner] if needs_x else []) + params
        found = iter(torch.autograd.grad(out, wanted, grad, allow_unused=True) if wanted else ())
        grad_x = next(found) if needs_x else None
        return (None, grad_x) + tuple(next(found) if needed else None for needed in needs_params)
