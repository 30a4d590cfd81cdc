# A one-sided difference (f(x + eps) - f(x)) / eps: off by about eps * f'' / 2, so a correct backward
# of a function with a large second derivative looks wrong.
def check_grad(fn, inputs, eps=1e-6):
    """Per input: max |analytical - numerical| Jacobian entry, or None if it needs no gradient."""
    inputs = list(inputs)
    wanted = [i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and x.requires_grad]
    out = fn(*inputs)
    with torch.no_grad():
        base = fn(*inputs).numpy().ravel()
    errors = [None] * len(inputs)
    for i in wanted:
        analytical = np.zeros((out.numel(), inputs[i].numel()))
        for j in range(out.numel()):
            one_hot = torch.zeros_like(out)
            one_hot.view(-1)[j] = 1.0
            (row,) = torch.autograd.grad(out, [inputs[i]], one_hot, retain_graph=True, allow_unused=True)
            if row is not None:
                analytical[j] = row.numpy().ravel()
        numerical = np.zeros_like(analytical)
        for k in range(inputs[i].numel()):
            moved = inputs[i].detach().clone()
            moved.view(-1)[k] += eps
            with torch.no_grad():
                numerical[:, k] = (fn(*inputs[:i], moved, *inputs[i + 1:]).numpy().ravel() - base) / eps
        errors[i] = float(np.abs(analytical - numerical).max())
    return errors
