# moves the dims the wrong way round: movedim(0, x_bdim) instead of movedim(x_bdim, 0)
def sum_rule(x, x_bdim, dim, keepdim=False):
    x = x.movedim(0, x_bdim)
    ndim = x.ndim - 1
    if dim is None:
        dims = tuple(range(1, ndim + 1))
    else:
        dims = tuple(d % ndim + 1 for d in (dim if isinstance(dim, tuple) else (dim,)))
    return x.sum(dims, keepdim), 0
