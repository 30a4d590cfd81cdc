# style: an iterative walk whose local list is named topological_order (a variable, not the engine's function)
# expect: full points for summarize; no integrity row


def summarize(t):
    """{node name: number of distinct nodes with that name} for the graph of t."""
    if t.grad_fn is None:
        return {}
    topological_order, seen, stack = [], {t.grad_fn}, [t.grad_fn]
    while stack:
        node = stack.pop()
        topological_order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    counts = {}
    for node in topological_order:
        counts[node.name()] = counts.get(node.name(), 0) + 1
    return counts
