# The chapter's two-sided WGAN-GP penalty: it also penalises norms below 1, which the one-sided one allows.
def gradient_penalty(D, real, fake, alpha):
    """mean(max(0, ||d D(x) / dx|| - 1) ** 2) at x = alpha * real + (1 - alpha) * fake, differentiable in D."""
    points = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)
    (grads,) = torch.autograd.grad(D(points).sum(), points, create_graph=True)
    norms = grads.reshape(grads.shape[0], -1).norm(2, dim=1)
    return ((norms - 1) ** 2).mean()
