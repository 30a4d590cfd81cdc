# Sums only the leading dimensions broadcasting added, not the size-1 ones it stretched.
def accumulate(buffers, node, grad, shape):
    """Add grad, summed back to shape, into buffers[node]."""
    grad = np.asarray(grad)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    buffers[node] = buffers[node] + grad if node in buffers else grad
