# mistake: the norm over the last dimension only (g.norm(dim=-1)), right for vectors, wrong for samples
#   that are matrices or images
# expect: 0 points for gradient_penalty
def gradient_penalty(D, real, fake, alpha):
    """mean(max(0, ||d D(x) / dx|| - 1) ** 2) at x = alpha * real + (1 - alpha) * fake, differentiable in D."""
    points = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)
    (g,) = torch.autograd.grad(D(points).sum(), points, create_graph=True)
    norm = g.pow(2).sum(-1).sqrt()
    return (norm - 1).clamp(min=0).pow(2).mean()
