# Overwrites the buffer instead of adding to it: a node fed by two paths keeps only the last gradient.
def accumulate(buffers, node, grad, shape):
    """Add grad, summed back to shape, into buffers[node]."""
    grad = np.asarray(grad)
    lead = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    buffers[node] = grad.sum(axis=axes, keepdims=True)
