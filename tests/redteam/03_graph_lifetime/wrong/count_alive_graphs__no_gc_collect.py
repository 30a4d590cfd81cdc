# mistake: counts the weak references without gc.collect() first, so graphs caught in a reference
#   cycle (garbage, not leaks) are counted as alive
# expect: 0 points for count_alive_graphs
def count_alive_graphs(step, steps):
    """How many of the graphs of `steps` calls of step() are still alive afterwards."""
    refs = [weakref.ref(step().grad_fn) for _ in range(steps)]
    return sum(r() is not None for r in refs)
