# Recursive depth-first walk: right on small graphs, RecursionError on a graph built by a long loop.
def walk(t):
    """Every node reachable from t.grad_fn, each once, t.grad_fn first."""
    found, seen = [], set()

    def visit(node):
        seen.add(node)
        found.append(node)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                visit(child)

    if t.grad_fn is not None:
        visit(t.grad_fn)
    return found
