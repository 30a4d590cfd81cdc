# Swaps the two gradients' formulas: a.T @ grad for a, grad @ b.T for b (the shapes of b's and a's gradients).
def div_backward(grad, a, b):
    """Gradients of a / b."""
    return grad / b, -grad * a / (b * b)


def exp_backward(grad, out):
    """Gradient of exp(x), from the saved output out = exp(x)."""
    return (grad * out,)


def matmul_backward(grad, a, b):
    """Gradients of a @ b (2-D)."""
    return a.T @ grad, grad @ b.T
