# Freezes the right parameters but gives the optimizer all of them.
def fine_tune(model, trainable, lr):
    """Freeze everything outside the `trainable` sub-modules; an SGD optimizer over what stays trainable."""
    def inside(name):
        return any(name == prefix or name.startswith(prefix + ".") for prefix in trainable)

    for name, p in model.named_parameters():
        p.requires_grad_(inside(name))
    for name, module in model.named_modules():
        if isinstance(module, nn.BatchNorm1d) and not inside(name):
            module.eval()
    return optim.SGD(model.parameters(), lr=lr, momentum=0.9)
