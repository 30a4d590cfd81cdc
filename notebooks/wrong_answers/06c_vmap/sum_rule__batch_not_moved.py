# assumes the batch is always at dim 0: shifts the dims by one but never moves x's batch dim there
def sum_rule(x, x_bdim, dim, keepdim=False):
    ndim = x.ndim - 1
    if dim is None:
        dims = tuple(range(1, ndim + 1))
    else:
        dims = tuple(d % ndim + 1 for d in (dim if isinstance(dim, tuple) else (dim,)))
    return x.sum(dims, keepdim), 0
