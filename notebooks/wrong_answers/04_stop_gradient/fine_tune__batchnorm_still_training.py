# Freezes the parameters only: a frozen BatchNorm in training mode still updates its running statistics.
def fine_tune(model, trainable, lr):
    """Freeze everything outside the `trainable` sub-modules; an SGD optimizer over what stays trainable."""
    params = []
    for name, p in model.named_parameters():
        keep = any(name == prefix or name.startswith(prefix + ".") for prefix in trainable)
        p.requires_grad_(keep)
        if keep:
            params.append(p)
    return optim.SGD(params, lr=lr, momentum=0.9)
