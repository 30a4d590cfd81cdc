# mistake: a tuple of dims is summed one dim at a time, highest first, and keepdim is honoured for a single dim
#   only (a tuple with keepdim=True loses its dims)
# expect: 0 points for sum_rule
def sum_rule(x, x_bdim, dim, keepdim=False):
    x = x.movedim(x_bdim, 0)
    if dim is None:
        return x.reshape(x.shape[0], -1).sum(1), 0
    if isinstance(dim, tuple):
        for d in sorted((d % (x.ndim - 1) + 1 for d in dim), reverse=True):
            x = x.sum(d)
        return x, 0
    return x.sum(dim % (x.ndim - 1) + 1, keepdim), 0
