# mistake: a parameter is "in" a module when its name starts with the module's name, so "10.weight"
#   and "11.bias" count as inside "1"
# expect: 0 points for fine_tune
def fine_tune(model, trainable, lr):
    """Freeze everything outside the `trainable` sub-modules; an SGD optimizer over what stays trainable."""
    keep = []
    for name, p in model.named_parameters():
        inside = any(name.startswith(t) for t in trainable)
        p.requires_grad_(inside)
        if inside:
            keep.append(p)
    for name, m in model.named_modules():
        if isinstance(m, nn.BatchNorm1d) and not any(name.startswith(t) for t in trainable):
            m.eval()
    return optim.SGD(keep, lr=lr, momentum=0.9)
