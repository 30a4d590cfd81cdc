# mistake: returns the depth-first preorder (the order nodes are first reached) instead of the
#   reversed finishing order, so a shared node can come before a node that feeds it
# expect: 0 points for dfs_order
def dfs_order(roots):
    """Every node reachable from roots, each once, each before the nodes it feeds (reversed DFS post-order)."""
    order, seen, stack = [], set(), list(reversed(roots))
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        for child, _ in reversed(node.next_functions):
            if child is not None and child not in seen:
                stack.append(child)
    return order
