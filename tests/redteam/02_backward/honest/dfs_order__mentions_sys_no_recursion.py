# style: an explicit-stack DFS that imports sys only to read (never raise) the recursion limit; no recursion
#   anywhere (the lead dropped its `assert _LIMIT == sys.getrecursionlimit()`: the judge's calls run under
#   Python's default limit, so the limit a call sees is not the one the notebook read)
# expect: full points for dfs_order; no integrity row
import sys

_LIMIT = sys.getrecursionlimit()  # recursion would fail past this depth, so the walk below keeps its own stack


def dfs_order(roots):
    """Every node reachable from roots, each once, each before the nodes it feeds (reversed DFS post-order)."""
    finished, seen = [], set()
    for root in roots:
        if root is None or root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, children = stack[-1]
            for nxt, _ in children:
                if nxt is not None and nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, iter(nxt.next_functions)))
                    break
            else:
                stack.pop()
                finished.append(node)
    return finished[::-1]
