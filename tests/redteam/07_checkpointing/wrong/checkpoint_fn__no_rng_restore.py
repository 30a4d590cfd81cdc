# mistake: replays the saved random state for the recomputation but does not put the generator back,
#   so the random numbers drawn after backward differ from a run without checkpointing
# expect: 0 points for checkpoint_fn
class CheckpointFn(Function):
    @staticmethod
    def forward(ctx, module, x, *params):
        ctx.module = module
        ctx.rng = torch.get_rng_state()
        ctx.save_for_backward(x)
        return module(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        params = list(ctx.module.parameters())
        inner = x.detach().requires_grad_(x.requires_grad)
        torch.set_rng_state(ctx.rng)
        with torch.enable_grad():
            out = ctx.module(inner)
        wanted = [inner] + params
        grads = torch.autograd.grad(out, wanted, grad, allow_unused=True)
        grads = [g if need else None for g, need in zip(grads, ctx.needs_input_grad[1:])]
        return (None, *grads)
