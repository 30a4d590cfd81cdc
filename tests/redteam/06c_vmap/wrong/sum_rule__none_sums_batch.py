# mistake: dim=None sums over everything, the batch included (as x.sum() would)
# expect: 0 points for sum_rule
def sum_rule(x, x_bdim, dim, keepdim=False):
    x = x.movedim(x_bdim, 0)
    if dim is None:
        return x.sum().expand(x.shape[0]), 0
    dims = dim if isinstance(dim, tuple) else (dim,)
    dims = tuple(d % (x.ndim - 1) + 1 for d in dims)
    return x.sum(dims, keepdim), 0
