# Calls torch.autograd.functional.hvp instead of writing the two autograd.grad calls: the exercise is to
# write it (the student edition stubs chibigrad's copy, and grading refuses it).
def hvp(f, params, vectors):
    """(H v) of the scalar f(*params), one tensor per parameter."""
    _, products = torch.autograd.functional.hvp(f, tuple(params), tuple(vectors))
    return products
