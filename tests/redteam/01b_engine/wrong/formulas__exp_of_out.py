# mistake: exp_backward takes the exponential of the saved value again (grad * exp(out)), forgetting
#   that the node saved its output exp(x), not x
# expect: 0 points for formulas
def div_backward(grad, a, b):
    """Gradients of a / b."""
    return grad / b, -grad * a / b ** 2


def exp_backward(grad, out):
    """Gradient of exp(x), from the saved output out = exp(x)."""
    return (grad * np.exp(out),)


def matmul_backward(grad, a, b):
    """Gradients of a @ b (2-D)."""
    return grad @ b.T, a.T @ grad
