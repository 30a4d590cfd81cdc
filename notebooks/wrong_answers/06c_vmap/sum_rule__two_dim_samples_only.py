# written for the (3, 4) samples of the examples: wraps a negative dim as if every sample had two dims
def sum_rule(x, x_bdim, dim, keepdim=False):
    x = x.movedim(x_bdim, 0)
    if dim is None:
        dims = tuple(range(1, x.ndim))
    else:
        dims = tuple(d % 2 + 1 for d in (dim if isinstance(dim, tuple) else (dim,)))
    return x.sum(dims, keepdim), 0
