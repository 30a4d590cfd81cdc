# style: a generator of post-order nodes with a local variable called topological_order and sys imported
#   (for sys.maxsize only); no recursion
# expect: full points for dfs_order; no integrity row
import sys


def _postorder(roots):
    seen = set()
    for root in roots:
        if root is None or root in seen:
            continue
        seen.add(root)
        stack = [(root, 0)]
        while stack:
            node, i = stack.pop()
            children = [m for m, _ in node.next_functions]
            while i < len(children) and (children[i] is None or children[i] in seen):
                i += 1
            if i < len(children) and i < sys.maxsize:
                stack.append((node, i + 1))
                seen.add(children[i])
                stack.append((children[i], 0))
            else:
                yield node


def dfs_order(roots):
    """Every node reachable from roots, each once, each before the nodes it feeds (reversed DFS post-order)."""
    topological_order = list(_postorder(roots))
    topological_order.reverse()
    return topological_order
