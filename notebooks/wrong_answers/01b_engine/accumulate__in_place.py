# Adds in place (+=) into the array already in the buffer: that array may be another node's buffer or the incoming gradient.
def accumulate(buffers, node, grad, shape):
    """Add grad, summed back to shape, into buffers[node]."""
    grad = np.asarray(grad)
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1)
    if axes:
        grad = grad.sum(axis=axes, keepdims=True).reshape(shape)
    if node in buffers:
        buffers[node] += grad
    else:
        buffers[node] = grad
