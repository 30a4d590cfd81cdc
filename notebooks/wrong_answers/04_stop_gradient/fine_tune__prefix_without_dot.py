# Matches names with startswith(name) alone: trainable "1" also unfreezes "10.weight", "11.bias", ...
def fine_tune(model, trainable, lr):
    """Freeze everything outside the `trainable` sub-modules; an SGD optimizer over what stays trainable."""
    params = []
    for name, p in model.named_parameters():
        keep = any(name.startswith(prefix) for prefix in trainable)
        p.requires_grad_(keep)
        if keep:
            params.append(p)
    for name, module in model.named_modules():
        if isinstance(module, nn.BatchNorm1d) and not any(name.startswith(prefix) for prefix in trainable):
            module.eval()
    return optim.SGD(params, lr=lr, momentum=0.9)
