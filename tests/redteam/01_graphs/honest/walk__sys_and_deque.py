# style: a breadth-first walk with collections.deque that imports sys (for nothing recursive: a size guard);
#   the docstring says which library walker it does not call (written by the lead, not the outside team)
# expect: full points for walk; no integrity row
import sys
from collections import deque


def walk(t):
    """Every node reachable from t.grad_fn, each once, t.grad_fn first (unlike topological_order, no counting)."""
    if t.grad_fn is None:
        return []
    seen, found, queue = {t.grad_fn}, [], deque([t.grad_fn])
    while queue and len(found) < sys.maxsize:
        node = queue.popleft()
        found.append(node)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                queue.append(child)
    return found
