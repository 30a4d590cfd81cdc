# Calls backward() on the recomputed graph, as chibigrad's own checkpoint does, and returns None for
# the parameters: .grad is right, but the node has no gradients for its parameter edges, so
# torch.autograd.grad(loss, parameters) gets nothing.
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
        inner = x.detach().requires_grad_(ctx.needs_input_grad[1])
        resume = torch.get_rng_state()
        torch.set_rng_state(ctx.rng_state)
        try:
            with torch.enable_grad():
                out = ctx.module(inner)
        finally:
            torch.set_rng_state(resume)
        out.backward(grad)
        return (None, inner.grad) + (None,) * len(list(ctx.module.parameters()))
