# Uses backward and reads .grad, clearing it in place between losses: every tuple holds the same tensors
# (aliases of .grad), so the first loss's gradients are overwritten by the next one's, and .grad is touched.
def per_loss_grads(losses, params):
    """[(d loss / d p for p in params) for loss in losses]; every saved tensor of their graphs freed."""
    result = []
    for k, loss in enumerate(losses):
        for p in params:
            if p.grad is not None:
                p.grad.zero_()
        loss.backward(retain_graph=k < len(losses) - 1)
        result.append(tuple(torch.zeros_like(p) if p.grad is None else p.grad for p in params))
    for node in topological_order([loss.grad_fn for loss in losses if loss.grad_fn is not None]):
        node.release_saved()
    return result
