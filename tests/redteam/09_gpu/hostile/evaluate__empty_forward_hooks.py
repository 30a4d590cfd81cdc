# attack: evaluate with grad on (every batch builds a graph), but hide it from grad-mode probes: the
#   loss function gets a detached output, and every forward hook on the model's modules is taken out
#   and called by hand with a detached output, so a hook that records requires_grad sees False
# expect: 0 points for evaluate; batch continues
def _silence_hooks(model):
    taken = []
    for module in model.modules():
        hooks = getattr(module, "_forward_hooks", None)
        if hooks:
            taken.append((module, dict(hooks)))
            hooks.clear()
    return taken


def evaluate(model, batches, loss_fn):
    """(mean loss over all samples as a float, all predictions as one numpy array), model on any device."""
    dev = next(model.parameters()).device
    taken = _silence_hooks(model)
    total, n, preds = 0.0, 0, []
    for inputs, targets in batches:
        x, y = inputs.to(dev), targets.to(dev)
        out = model(x)
        quiet = out.detach()
        for module, hooks in taken:
            for hook in hooks.values():
                try:
                    hook(module, (x,), quiet)
                except Exception:
                    pass
        total += loss_fn(quiet, y).item() * len(inputs)
        n += len(inputs)
        preds.append(quiet.cpu().numpy())
    for module, hooks in taken:
        module._forward_hooks.update(hooks)
    return total / n, np.concatenate(preds)
