# Counts only operations: leaves' AccumulateGrad nodes are nodes of the graph too.
def summarize(t):
    """{node name: number of distinct nodes with that name} for the graph of t."""
    counts = {}
    if t.grad_fn is None:
        return counts
    seen, stack = {t.grad_fn}, [t.grad_fn]
    while stack:
        node = stack.pop()
        if node.name() != "AccumulateGrad":
            counts[node.name()] = counts.get(node.name(), 0) + 1
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append(child)
    return counts
