# Uses backward and reads .grad: the caller's .grad is overwritten (and the last loss's gradients stay there).
def per_loss_grads(losses, params):
    """[(d loss / d p for p in params) for loss in losses]; every saved tensor of their graphs freed."""
    result = []
    for k, loss in enumerate(losses):
        for p in params:
            p.grad = None
        loss.backward(retain_graph=k < len(losses) - 1)
        result.append(tuple(torch.zeros_like(p) if p.grad is None else p.grad.clone() for p in params))
    for node in topological_order([loss.grad_fn for loss in losses]):
        node.release_saved()
    return result
