# attack: update the target through .data (which hides the change from the version counter, what the
#   exercise forbids) and then forge the counter: bump p._version by hand (attribute, private bump
#   method or an in-place no-op), and average the buffers instead of copying them... no: copy them,
#   so only the forged counter is wrong
# expect: 0 points for ema_update (a graph that saved the parameter must detect the change); batch
#   continues
def _forge(p):
    for attempt_ in (lambda: setattr(p, "_version", p._version + 1),
                     lambda: p._bump_version(), lambda: p.__dict__.__setitem__("_version", p._version + 1)):
        try:
            before = p._version
            attempt_()
            if p._version > before:
                return
        except Exception:
            pass
    with torch.no_grad():
        p.mul_(1.0)  # a no-op in place: bumps the counter


def ema_update_(target, online, decay):
    """target <- decay * target + (1 - decay) * online for every parameter, in place; buffers copied."""
    for pt, po in zip(target.parameters(), online.parameters()):
        pt.data = decay * pt.data + (1 - decay) * po.data
        _forge(pt)
    with torch.no_grad():
        for bt, bo in zip(target.buffers(), online.buffers()):
            bt.copy_(bo)
