# mistake: shifts every dim by one, negative ones too (so -1, the last dim, becomes 0, the batch)
# expect: 0 points for sum_rule
def sum_rule(x, x_bdim, dim, keepdim=False):
    x = x.movedim(x_bdim, 0)
    if dim is None:
        return x.reshape(x.shape[0], -1).sum(1), 0
    dims = dim if isinstance(dim, tuple) else (dim,)
    return x.sum(tuple(d + 1 for d in dims), keepdim), 0
