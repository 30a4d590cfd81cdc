# Frees the whole graph after each loss: the next loss walks the shared encoder's freed nodes and raises.
def per_loss_grads(losses, params):
    """[(d loss / d p for p in params) for loss in losses]; every saved tensor of their graphs freed."""
    result = []
    for loss in losses:
        grads = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
        result.append(tuple(torch.zeros_like(p) if g is None else g for g, p in zip(grads, params)))
        for node in topological_order([loss.grad_fn]):
            node.release_saved()
    return result
