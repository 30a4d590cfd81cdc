# Uses the squared norm (no square root): the penalty pulls ||grad||^2, not ||grad||, towards 1.
def gradient_penalty(D, real, fake, alpha):
    """mean((||d D(x) / dx|| - 1) ** 2) at x = alpha * real + (1 - alpha) * fake, differentiable in D."""
    points = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)
    (grads,) = torch.autograd.grad(D(points).sum(), points, create_graph=True)
    squared = (grads.reshape(grads.shape[0], -1) ** 2).sum(1)
    return ((squared - 1) ** 2).mean()
