# Perturbs the caller's tensors in place and "restores" them by adding eps back: x + eps - 2 eps + eps
# is not always x in floating point, and every in-place step bumps the version saved tensors check.
def check_grad(fn, inputs, eps=1e-6):
    """Per input: max |analytical - numerical| Jacobian entry, or None if it needs no gradient."""
    inputs = list(inputs)
    wanted = [i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and x.requires_grad]
    out = fn(*inputs)
    errors = [None] * len(inputs)
    for i in wanted:
        x = inputs[i]
        analytical = np.zeros((out.numel(), x.numel()))
        for j in range(out.numel()):
            one_hot = torch.zeros_like(out)
            one_hot.view(-1)[j] = 1.0
            (row,) = torch.autograd.grad(out, [x], one_hot, retain_graph=True, allow_unused=True)
            if row is not None:
                analytical[j] = row.numpy().ravel()
        numerical = np.zeros_like(analytical)
        with torch.no_grad():
            for k in range(x.numel()):
                x.view(-1)[k] += eps
                plus = fn(*inputs).numpy().ravel()
                x.view(-1)[k] -= 2 * eps
                minus = fn(*inputs).numpy().ravel()
                x.view(-1)[k] += eps
                numerical[:, k] = (plus - minus) / (2 * eps)
        errors[i] = float(np.abs(analytical - numerical).max())
    return errors
