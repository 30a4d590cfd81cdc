# Recursive depth-first search: right, until the graph is deeper than Python's recursion limit.
def dfs_order(roots):
    """Every node reachable from roots, each once, each before the nodes it feeds (reversed DFS post-order)."""
    seen, finished = set(), []

    def visit(node):
        seen.add(node)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                visit(child)
        finished.append(node)

    for root in roots:
        if root not in seen:
            visit(root)
    return finished[::-1]
