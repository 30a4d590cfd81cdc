# Off by one dimension: the size-1 dimensions of `shape` are not shifted by the number of leading
# dimensions, so (4, 2, 3) -> (2, 1) sums dimensions 0 and 1 instead of 0 and 2.
def sum_to(grad, shape):
    """grad summed over the dimensions that broadcasting added or stretched, to `shape`."""
    shape = tuple(shape)
    lead = grad.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if dims:
        grad = grad.sum(dims, keepdim=True)
    return grad.reshape(shape)
