# Runs the module with recording switched back on and keeps the output's graph for backward: no
# recomputation, so every activation stays alive, which is what checkpointing was meant to avoid.
class CheckpointFn(Function):
    @staticmethod
    def forward(ctx, module, x, *params):
        ctx.inner = x.detach().requires_grad_(x.requires_grad)
        with torch.enable_grad():
            ctx.out = module(ctx.inner)
        ctx.params = [p for p in params]
        return ctx.out.detach()

    @staticmethod
    def backward(ctx, grad):
        needs_x, needs_params = ctx.needs_input_grad[1], ctx.needs_input_grad[2:]
        params = [p for p, needed in zip(ctx.params, needs_params) if needed]
        wanted = ([ctx.inner] if needs_x else []) + params
        found = iter(torch.autograd.grad(ctx.out, wanted, grad, allow_unused=True) if wanted else ())
        grad_x = next(found) if needs_x else None
        return (None, grad_x) + tuple(next(found) if needed else None for needed in needs_params)
