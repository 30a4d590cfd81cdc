# Counts a node every time a path reaches it, instead of once per node.
def summarize(t):
    """{node name: number of distinct nodes with that name} for the graph of t."""
    counts = {}
    stack = [t.grad_fn] if t.grad_fn is not None else []
    while stack:
        node = stack.pop()
        counts[node.name()] = counts.get(node.name(), 0) + 1
        stack.extend(child for child, _ in node.next_functions if child is not None)
    return counts
