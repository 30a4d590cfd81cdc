# Counts without gc.collect(): graphs that are only waiting in a reference cycle for the next collection
# count as leaks.
def count_alive_graphs(step, steps):
    """How many of the graphs of `steps` calls of step() are still alive afterwards."""
    nodes = [weakref.ref(step().grad_fn) for _ in range(steps)]
    return sum(node() is not None for node in nodes)
