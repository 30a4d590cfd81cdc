# Off by one: counts the edges of the longest path instead of its nodes.
def depth(t):
    """Number of nodes on the longest path from t.grad_fn to the end of the graph (0 without grad_fn)."""
    if t.grad_fn is None:
        return 0
    longest, stack = 0, [(t.grad_fn, 0)]
    best = {}
    while stack:
        node, edges = stack.pop()
        if best.get(node, -1) >= edges:
            continue
        best[node] = edges
        longest = max(longest, edges)
        stack.extend((c, edges + 1) for c, _ in node.next_functions if c is not None)
    return longest
