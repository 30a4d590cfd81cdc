# Keeps the losses in a list to look at their grad_fn at the end: that list itself keeps every graph alive.
def count_alive_graphs(step, steps):
    """How many of the graphs of `steps` calls of step() are still alive afterwards."""
    losses = [step() for _ in range(steps)]
    gc.collect()
    return sum(weakref.ref(loss.grad_fn)() is not None for loss in losses)
