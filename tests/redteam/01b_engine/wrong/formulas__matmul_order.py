# mistake: matmul_backward multiplies in the wrong order (b.T @ grad, grad @ a.T), which only has the
#   right shape for square matrices
# expect: 0 points for formulas
def div_backward(grad, a, b):
    """Gradients of a / b."""
    return grad / b, -grad * a / b ** 2


def exp_backward(grad, out):
    """Gradient of exp(x), from the saved output out = exp(x)."""
    return (grad * out,)


def matmul_backward(grad, a, b):
    """Gradients of a @ b (2-D)."""
    return grad @ b.T, grad.T @ a
