# Replays the saved random state for the recomputation but leaves the generator there: every random
# number drawn after backward repeats numbers already used in forward.
class CheckpointFn(Function):
    @staticmethod
    def forward(ctx, module, x, *params):
        ctx.module = module
        ctx.rng_state = torch.get_rng_state()
        ctx.save_for_backward(x)
        return module(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        needs_x, needs_params = ctx.needs_input_grad[1], ctx.needs_input_grad[2:]
        inner = x.detach().requires_grad_(needs_x)
        torch.set_rng_state(ctx.rng_state)
        with torch.enable_grad():
            out = ctx.module(inner)
        params = [p for p, needed in zip(ctx.module.parameters(), needs_params) if needed]
        wanted = ([inner] if needs_x else []) + params
        found = iter(torch.autograd.grad(out, wanted, grad, allow_unused=True) if wanted else ())
        grad_x = next(found) if needs_x else None
        return (None, grad_x) + tuple(next(found) if needed else None for needed in needs_params)
