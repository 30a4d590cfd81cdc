# Differentiates each parameter's own g_i . v_i with respect to that parameter only: the diagonal blocks of
# H, without the cross terms between parameters.
def hvp(f, params, vectors):
    """(H v) of the scalar f(*params), one tensor per parameter, computed by double backward."""
    grads = torch.autograd.grad(f(*params), params, create_graph=True, allow_unused=True)
    result = []
    for g, v, p in zip(grads, vectors, params):
        if g is None or not g.requires_grad:
            result.append(torch.zeros_like(p))
            continue
        (h,) = torch.autograd.grad((g * v).sum(), p, retain_graph=True, allow_unused=True)
        result.append(torch.zeros_like(p) if h is None else h)
    return tuple(result)
