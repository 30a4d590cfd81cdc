# Checks only the gradient of the sum of the outputs (one backward with grad_outputs of ones): a
# backward that ignores grad_output, or whose errors cancel across outputs, passes.
def check_grad(fn, inputs, eps=1e-6):
    """Per input: max |analytical - numerical| Jacobian entry, or None if it needs no gradient."""
    inputs = list(inputs)
    wanted = [i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and x.requires_grad]
    grads = torch.autograd.grad(fn(*inputs).sum(), [inputs[i] for i in wanted], allow_unused=True)
    errors = [None] * len(inputs)
    for i, g in zip(wanted, grads):
        analytical = np.zeros(inputs[i].numel()) if g is None else g.numpy().ravel()
        numerical = np.zeros_like(analytical)
        for k in range(inputs[i].numel()):
            values = []
            for step in (eps, -eps):
                moved = inputs[i].detach().clone()
                moved.view(-1)[k] += step
                with torch.no_grad():
                    values.append(fn(*inputs[:i], moved, *inputs[i + 1:]).sum().item())
            numerical[k] = (values[0] - values[1]) / (2 * eps)
        errors[i] = float(np.abs(analytical - numerical).max())
    return errors
