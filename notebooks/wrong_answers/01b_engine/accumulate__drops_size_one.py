# Sums the stretched dimensions without keepdims: a (2, 1) input gets a gradient of shape (2,).
def accumulate(buffers, node, grad, shape):
    """Add grad, summed back to shape, into buffers[node]."""
    grad = np.asarray(grad)
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1)
    total = grad.sum(axis=axes) if axes else grad
    buffers[node] = buffers[node] + total if node in buffers else total
