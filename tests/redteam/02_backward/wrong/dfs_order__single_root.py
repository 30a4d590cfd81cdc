# mistake: a correct iterative post-order, but from roots[0] only (one output is the usual case)
# expect: 0 points for dfs_order
def dfs_order(roots):
    """Every node reachable from roots, each once, each before the nodes it feeds (reversed DFS post-order)."""
    finished, seen = [], {roots[0]}
    stack = [(roots[0], iter(roots[0].next_functions))]
    while stack:
        node, children = stack[-1]
        for child, _ in children:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append((child, iter(child.next_functions)))
                break
        else:
            stack.pop()
            finished.append(node)
    return finished[::-1]
