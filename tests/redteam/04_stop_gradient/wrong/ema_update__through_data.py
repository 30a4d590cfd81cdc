# mistake: updates through p.data, which the chapter shows hides the change from the version counter
# expect: 0 points for ema_update
def ema_update_(target, online, decay):
    """target <- decay * target + (1 - decay) * online for every parameter, in place; buffers copied."""
    for pt, po in zip(target.parameters(), online.parameters()):
        pt.data.mul_(decay).add_((1 - decay) * po.data)
    for bt, bo in zip(target.buffers(), online.buffers()):
        bt.data.copy_(bo.data)
