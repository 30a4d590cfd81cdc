# mistake: backward calls out.backward(grad) on the recomputed graph (as chibigrad's checkpoint does)
#   and returns only x's gradient, so autograd.grad cannot reach the parameters
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
        inner = x.detach().requires_grad_(True)
        now = torch.get_rng_state()
        torch.set_rng_state(ctx.rng)
        with torch.enable_grad():
            out = ctx.module(inner)
        torch.set_rng_state(now)
        out.backward(grad)
        return (None, inner.grad) + (None,) * len(list(ctx.module.parameters()))
