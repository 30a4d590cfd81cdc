# mistake: sums only the leading dimensions broadcasting added, not the stretched size-1 ones
# expect: 0 points for sum_to
def sum_to(grad, shape):
    """grad summed over the dimensions that broadcasting added or stretched, to `shape`."""
    extra = grad.dim() - len(shape)
    if extra > 0:
        grad = grad.sum(tuple(range(extra)))
    return grad
