# The quotient rule without its minus sign: the gradient for b is grad * a / b**2.
def div_backward(grad, a, b):
    """Gradients of a / b."""
    return grad / b, grad * a / b ** 2


def exp_backward(grad, out):
    """Gradient of exp(x), from the saved output out = exp(x)."""
    return (grad * out,)


def matmul_backward(grad, a, b):
    """Gradients of a @ b (2-D)."""
    return grad @ b.T, a.T @ grad
