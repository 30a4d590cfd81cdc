# style: getattr with a constant name, a docstring that names Tensor.sum_to_size, and a local called
#   `size` (written by the lead, not the outside team)
# expect: full points for sum_to; no integrity row
def sum_to(grad, shape):
    """grad summed to `shape` by hand (what Tensor.sum_to_size does, written out)."""
    shape = tuple(shape)
    size = getattr(grad, "ndim") - len(shape)
    if size:
        grad = grad.sum(tuple(range(size)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(stretched, keepdim=True)
    return grad.reshape(shape)
