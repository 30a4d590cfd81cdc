# mistake: leaves the batch where it is and only shifts dims at or after it; but says the batch is at 0
# expect: 0 points for sum_rule
def sum_rule(x, x_bdim, dim, keepdim=False):
    if dim is None:
        dims = tuple(d for d in range(x.ndim) if d != x_bdim)
    else:
        dims = tuple(d % (x.ndim - 1) for d in (dim if isinstance(dim, tuple) else (dim,)))
        dims = tuple(d + 1 if d >= x_bdim else d for d in dims)
    return x.sum(dims, keepdim), 0
