# mistake: a depth-first preorder with a stack and a seen set instead of counting dependencies, so a
#   shared node can come before a node that still sends it a gradient
# expect: 0 points for backward_order
def backward_order(root):
    """The nodes reachable from root, each once, each before the nodes it feeds (dependency counting)."""
    order, seen, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        for child in reversed(node.edges):
            if child is not None:
                stack.append(child)
    return order
