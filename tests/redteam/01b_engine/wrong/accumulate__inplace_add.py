# mistake: adds into the buffer with +=, changing the array in place: AddBackward0 hands one array to
#   two inputs, so the other input's buffer (or the incoming grad) changes too
# expect: 0 points for accumulate
def accumulate(buffers, node, grad, shape):
    """Add grad, summed back to shape, into buffers[node]."""
    g = grad
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    if node in buffers:
        buffers[node] += g
    else:
        buffers[node] = g
