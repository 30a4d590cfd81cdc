# No care for a gradient that does not depend on the parameters: where f is linear, the second
# autograd.grad raises instead of returning zeros.
def hvp(f, params, vectors):
    """(H v) of the scalar f(*params), one tensor per parameter, computed by double backward."""
    grads = torch.autograd.grad(f(*params), params, create_graph=True)
    dot = sum((g * v).sum() for g, v in zip(grads, vectors))
    return torch.autograd.grad(dot, params)
