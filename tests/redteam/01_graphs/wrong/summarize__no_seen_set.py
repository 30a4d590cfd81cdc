# mistake: an explicit stack but no set of nodes already seen, so a shared node is counted once per
#   path that reaches it
# expect: 0 points for summarize
def summarize(t):
    """{node name: number of distinct nodes with that name} for the graph of t."""
    counts = {}
    stack = [t.grad_fn] if t.grad_fn is not None else []
    while stack:
        node = stack.pop()
        counts[node.name()] = counts.get(node.name(), 0) + 1
        for parent, _ in node.next_functions:
            if parent is not None:
                stack.append(parent)
    return counts
