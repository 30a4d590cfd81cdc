# dim=None sums everything, the batch dim included
def sum_rule(x, x_bdim, dim, keepdim=False):
    x = x.movedim(x_bdim, 0)
    if dim is None:
        return x.sum(), 0
    ndim = x.ndim - 1
    dims = tuple(d % ndim + 1 for d in (dim if isinstance(dim, tuple) else (dim,)))
    return x.sum(dims, keepdim), 0
