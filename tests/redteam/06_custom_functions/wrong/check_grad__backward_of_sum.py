# mistake: one autograd.grad of out.sum() instead of one per output element, so the "analytical
#   Jacobian" is the column sums: a backward that ignores grad_output looks right
# expect: 0 points for check_grad
def check_grad(fn, inputs, eps=1e-6):
    """Per input: max |analytical - numerical| Jacobian entry, or None if it needs no gradient."""
    out = fn(*inputs)
    wanted = [i for i, t in enumerate(inputs) if isinstance(t, torch.Tensor) and t.requires_grad]
    grads = torch.autograd.grad(out.sum(), [inputs[i] for i in wanted], allow_unused=True)
    errors = [None] * len(inputs)
    with torch.no_grad():
        for i, g in zip(wanted, grads):
            ana = np.zeros(inputs[i].numel()) if g is None else g.numpy().reshape(-1)
            num = np.zeros_like(ana)
            for k in range(inputs[i].numel()):
                plus, minus = list(inputs), list(inputs)
                xp, xm = inputs[i].detach().clone(), inputs[i].detach().clone()
                xp.view(-1)[k] += eps
                xm.view(-1)[k] -= eps
                plus[i], minus[i] = xp, xm
                num[k] = float(((fn(*plus) - fn(*minus)) / (2 * eps)).sum())
            errors[i] = float(np.abs(ana - num).max())
    return errors
