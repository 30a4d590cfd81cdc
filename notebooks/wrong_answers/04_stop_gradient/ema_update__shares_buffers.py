# Shares the online network's buffers instead of copying them (t.data = o.data): the running statistics
# of the two networks become one array, so the target's move whenever the online network trains.
def ema_update_(target, online, decay):
    """target <- decay * target + (1 - decay) * online for every parameter, in place; buffers copied."""
    with torch.no_grad():
        for t, o in zip(target.parameters(), online.parameters()):
            t.mul_(decay).add_(o, alpha=1 - decay)
        for t, o in zip(target.buffers(), online.buffers()):
            t.data = o.data
