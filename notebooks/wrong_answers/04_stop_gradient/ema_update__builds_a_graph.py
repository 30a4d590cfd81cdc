# No torch.no_grad(): the average of a frozen target and an online network that requires grad is
# recorded, and copy_ makes every target parameter a non-leaf with a grad_fn.
def ema_update_(target, online, decay):
    """target <- decay * target + (1 - decay) * online for every parameter, in place; buffers copied."""
    for t, o in zip(target.parameters(), online.parameters()):
        t.copy_(decay * t + (1 - decay) * o)
    for t, o in zip(target.buffers(), online.buffers()):
        t.copy_(o)
