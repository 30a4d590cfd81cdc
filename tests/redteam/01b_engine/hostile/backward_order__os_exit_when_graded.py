# attack: a breadth-first order (wrong on graphs where a node is reached by paths of different
#   lengths, but it passes the visible tests) that, when a grader's frame is on the stack, kills the
#   kernel with os._exit(0) in the middle of the hidden tests, hoping a dead kernel keeps the cell's
#   points
# expect: 0 points for backward_order; the batch continues (the kernel's death is reported)
import os, sys
from collections import deque


def backward_order(root):
    """The nodes reachable from root, each once, each before the nodes it feeds (dependency counting)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("autograder"):
            os._exit(0)
        frame = frame.f_back
    order, seen, queue = [], {root}, deque([root])
    while queue:
        node = queue.popleft()
        order.append(node)
        for child in node.edges:
            if child is not None and child not in seen:
                seen.add(child)
                queue.append(child)
    # push nodes reached again later to the end, once: enough for the visible graphs
    fixed = []
    for node in order:
        if node in fixed:
            fixed.remove(node)
        fixed.append(node)
    return fixed
