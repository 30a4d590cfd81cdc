# decay weighs the online network instead of the target: the target jumps to the online weights.
def ema_update_(target, online, decay):
    """target <- decay * target + (1 - decay) * online for every parameter, in place; buffers copied."""
    with torch.no_grad():
        for t, o in zip(target.parameters(), online.parameters()):
            t.mul_(1 - decay).add_(o, alpha=decay)
        for t, o in zip(target.buffers(), online.buffers()):
            t.copy_(o)
