# mistake: the numerical Jacobian by one-sided differences (f(x + eps) - f(x)) / eps, off by eps * f'' / 2
# expect: 0 points for check_grad
def check_grad(fn, inputs, eps=1e-6):
    """Per input: max |analytical - numerical| Jacobian entry, or None if it needs no gradient."""
    out = fn(*inputs)
    wanted = [i for i, t in enumerate(inputs) if isinstance(t, torch.Tensor) and t.requires_grad]
    n = out.numel()
    analytical = {i: np.zeros((n, inputs[i].numel())) for i in wanted}
    for j in range(n):
        one_hot = torch.zeros(n, dtype=out.dtype)
        one_hot[j] = 1.0
        grads = torch.autograd.grad(out, [inputs[i] for i in wanted], one_hot.reshape(out.shape),
                                    retain_graph=True, allow_unused=True)
        for i, g in zip(wanted, grads):
            if g is not None:
                analytical[i][j] = g.detach().numpy().reshape(-1)
    errors = [None] * len(inputs)
    with torch.no_grad():
        base = fn(*inputs).detach().numpy().reshape(-1)
        for i in wanted:
            numerical = np.zeros_like(analytical[i])
            for k in range(inputs[i].numel()):
                args = list(inputs)
                x = inputs[i].detach().clone()
                x.view(-1)[k] += eps
                args[i] = x
                numerical[:, k] = (fn(*args).numpy().reshape(-1) - base) / eps
            errors[i] = float(np.abs(analytical[i] - numerical).max())
    return errors
