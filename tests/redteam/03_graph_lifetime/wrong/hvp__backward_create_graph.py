# mistake: the first derivative with backward(create_graph=True), reading .grad (and leaving it set)
# expect: 0 points for hvp
def hvp(f, params, vectors):
    """(H v) of the scalar f(*params), one tensor per parameter, computed by double backward."""
    f(*params).backward(create_graph=True)
    grads = [p.grad for p in params]
    dot = sum((g * v).sum() for g, v in zip(grads, vectors) if g is not None and g.grad_fn is not None)
    if not isinstance(dot, torch.Tensor):
        return tuple(torch.zeros_like(p) for p in params)
    out = torch.autograd.grad(dot, params, allow_unused=True)
    return tuple(torch.zeros_like(p) if o is None else o.detach() for p, o in zip(params, out))
