# Right numbers, computed in numpy: the result is a new leaf with no grad_fn, so nothing can be
# differentiated through it.
def sum_to(grad, shape):
    """grad summed over the dimensions that broadcasting added or stretched, to `shape`."""
    g = grad.detach().numpy()
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead)))
    dims = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    return torch.tensor(g.sum(axis=dims, keepdims=True).reshape(tuple(shape)), dtype=grad.dtype)
