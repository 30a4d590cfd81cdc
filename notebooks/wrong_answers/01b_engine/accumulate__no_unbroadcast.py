# Forgets broadcasting: the buffer keeps the output's shape, not the input's.
def accumulate(buffers, node, grad, shape):
    """Add grad, summed back to shape, into buffers[node]."""
    if node in buffers:
        buffers[node] = buffers[node] + grad
    else:
        buffers[node] = grad
