# style: the forbidden method named only in a comment and a string of an error message
# expect: full points for sum_to; no integrity row


def sum_to(grad, shape):
    """grad summed over the dimensions that broadcasting added or stretched, to `shape`."""
    # what Tensor.sum_to_size does, written out: drop the leading dimensions, then the stretched ones
    shape = tuple(shape)
    extra = grad.dim() - len(shape)
    if extra < 0:
        raise ValueError(f"cannot sum {tuple(grad.shape)} to {shape} (as sum_to_size would refuse)")
    for _ in range(extra):
        grad = grad.sum(0)
    for d, n in enumerate(shape):
        if n == 1 and grad.shape[d] != 1:
            grad = grad.sum(d, keepdim=True)
    return grad
