# attack: recursion split over two module-level functions that call each other (no function calls itself),
#   with the limit raised through sys.__dict__
# expect: 0 points for dfs_order; integrity.csv row
import sys

sys.__dict__["setrecursionlimit"](100000)


def _enter(node, seen, post):
    seen.add(node)
    _children(node, seen, post)
    post.append(node)


def _children(node, seen, post):
    for nxt, _ in node.next_functions:
        if nxt is not None and nxt not in seen:
            _enter(nxt, seen, post)


def dfs_order(roots):
    """Every node reachable from roots, each once, each before the nodes it feeds (reversed DFS post-order)."""
    seen, post = set(), []
    for r in roots:
        if r is not None and r not in seen:
            _enter(r, seen, post)
    return post[::-1]
