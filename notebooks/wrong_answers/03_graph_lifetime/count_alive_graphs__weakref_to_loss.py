# Watches the loss tensors instead of their graphs: total = total + loss lets each loss tensor go while
# keeping its graph, so that leak reads 0.
def count_alive_graphs(step, steps):
    """How many of the graphs of `steps` calls of step() are still alive afterwards."""
    refs = [weakref.ref(step()) for _ in range(steps)]
    gc.collect()
    return sum(ref() is not None for ref in refs)
