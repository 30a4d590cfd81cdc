# Recursive walk with a seen set: right counts on small graphs, RecursionError on a graph built by a long loop.
def summarize(t):
    """{node name: number of distinct nodes with that name} for the graph of t."""
    counts, seen = {}, set()

    def visit(node):
        seen.add(node)
        counts[node.name()] = counts.get(node.name(), 0) + 1
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                visit(child)

    if t.grad_fn is not None:
        visit(t.grad_fn)
    return counts
