# mistake: records a node's depth the first time a depth-first walk (with a seen set) reaches it and
#   never updates it, so the result depends on which path reaches a shared node first
# expect: 0 points for depth (random graphs with shared nodes)
def depth(t):
    """Number of nodes on the longest path from t.grad_fn to the end of the graph (0 without grad_fn)."""
    if t.grad_fn is None:
        return 0
    best, seen = 0, set()
    stack = [(t.grad_fn, 1)]
    while stack:
        node, d = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        best = max(best, d)
        for parent, _ in node.next_functions:
            if parent is not None:
                stack.append((parent, d + 1))
    return best
