# mistake: sums the size-1 dimensions without keepdims, so (2, 3) -> (2, 1) comes back as (2,)
# expect: 0 points for accumulate
def accumulate(buffers, node, grad, shape):
    """Add grad, summed back to shape, into buffers[node]."""
    g = np.asarray(grad)
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis in reversed(range(len(shape))):
        if shape[axis] == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis)
    buffers[node] = buffers[node] + g if node in buffers else g
