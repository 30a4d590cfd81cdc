# The old idiom through .data: right values, but .data has its own version counter, so a graph that saved
# the target's weights never learns that they changed.
def ema_update_(target, online, decay):
    """target <- decay * target + (1 - decay) * online for every parameter, in place; buffers copied."""
    for t, o in zip(target.parameters(), online.parameters()):
        t.data.mul_(decay).add_(o.data, alpha=1 - decay)
    for t, o in zip(target.buffers(), online.buffers()):
        t.data.copy_(o.data)
