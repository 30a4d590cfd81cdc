# attack: the forbidden walker bound as a default argument, fetched with __import__ on the parameter list
# expect: integrity.csv row (dynamic access)


def summarize(t, _o=__import__("chibigrad.autograd.engine", fromlist=["engine"]).topological_order):
    """{node name: number of distinct nodes with that name} for the graph of t."""
    if t.grad_fn is None:
        return {}
    counts = {}
    for node in _o([t.grad_fn]):
        counts[node.name()] = counts.get(node.name(), 0) + 1
    return counts
