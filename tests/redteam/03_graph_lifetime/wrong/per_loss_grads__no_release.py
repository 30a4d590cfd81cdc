# mistake: retain_graph=True on every call but the last, trusting the last call to free everything;
#   nodes that do not lead to params keep their saved tensors
# expect: 0 points for per_loss_grads
def per_loss_grads(losses, params):
    """[(d loss / d p for p in params) for loss in losses]; every saved tensor of their graphs freed."""
    out = []
    for i, loss in enumerate(losses):
        grads = torch.autograd.grad(loss, params, retain_graph=i < len(losses) - 1, allow_unused=True)
        out.append(tuple(torch.zeros_like(p) if g is None else g for p, g in zip(params, grads)))
    return out
