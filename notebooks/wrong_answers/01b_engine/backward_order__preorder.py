# Depth-first pre-order with a stack: a node is listed when first reached, before every node that feeds it is.
def backward_order(root):
    """The nodes reachable from root, each once, each before the nodes it feeds (dependency counting)."""
    order, stack, seen = [], [root], {root}
    while stack:
        node = stack.pop()
        order.append(node)
        for child in node.edges:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append(child)
    return order
