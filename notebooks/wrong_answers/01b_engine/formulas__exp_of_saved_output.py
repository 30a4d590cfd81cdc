# Takes the saved value for the input x: exp(out) = exp(exp(x)) instead of out.
def div_backward(grad, a, b):
    """Gradients of a / b."""
    return grad / b, -grad * a / (b * b)


def exp_backward(grad, out):
    """Gradient of exp(x), from the saved output out = exp(x)."""
    return (grad * np.exp(out),)


def matmul_backward(grad, a, b):
    """Gradients of a @ b (2-D)."""
    return grad @ b.T, a.T @ grad
