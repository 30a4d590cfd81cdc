# First gradient with backward(create_graph=True): it lands in .grad (and warns about a reference cycle).
def hvp(f, params, vectors):
    """(H v) of the scalar f(*params), one tensor per parameter, computed by double backward."""
    f(*params).backward(create_graph=True)
    terms = [(p.grad * v).sum() for p, v in zip(params, vectors) if p.grad is not None and p.grad.requires_grad]
    if not terms:
        return tuple(torch.zeros_like(p) for p in params)
    products = torch.autograd.grad(sum(terms), params, allow_unused=True)
    return tuple(torch.zeros_like(p) if h is None else h for h, p in zip(products, params))
