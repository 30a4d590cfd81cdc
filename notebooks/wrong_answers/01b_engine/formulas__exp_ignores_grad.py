# Returns the local derivative only, forgetting to multiply by the incoming gradient.
def div_backward(grad, a, b):
    """Gradients of a / b."""
    return grad / b, -grad * a / (b * b)


def exp_backward(grad, out):
    """Gradient of exp(x), from the saved output out = exp(x)."""
    return (out,)


def matmul_backward(grad, a, b):
    """Gradients of a @ b (2-D)."""
    return grad @ b.T, a.T @ grad
