# Differentiates with respect to the interpolated points without making them a fresh leaf: they are still
# part of the generator's graph, so the penalty's backward also reaches the generator.
def gradient_penalty(D, real, fake, alpha):
    """mean(max(0, ||d D(x) / dx|| - 1) ** 2) at x = alpha * real + (1 - alpha) * fake, differentiable in D."""
    points = alpha * real + (1 - alpha) * fake
    (grads,) = torch.autograd.grad(D(points).sum(), points, create_graph=True)
    norms = grads.reshape(grads.shape[0], -1).norm(2, dim=1)
    return ((norms - 1).clamp(min=0) ** 2).mean()
