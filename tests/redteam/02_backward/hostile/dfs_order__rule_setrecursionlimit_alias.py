# attack: recursion (a nested function that calls itself) under a recursion limit raised through an alias
#   (from sys import setrecursionlimit as _room)
# expect: 0 points for dfs_order; integrity.csv row
from sys import setrecursionlimit as _room

_room(100000)


def dfs_order(roots):
    """Every node reachable from roots, each once, each before the nodes it feeds (reversed DFS post-order)."""
    seen, post = set(), []

    def visit(node):
        seen.add(node)
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                visit(nxt)
        post.append(node)

    for r in roots:
        if r is not None and r not in seen:
            visit(r)
    return post[::-1]
