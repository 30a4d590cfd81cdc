# attack: recursion with no function naming itself: a lambda passed to itself (Y-combinator style)
# expect: 0 points for dfs_order (it recurses: the calls run under Python's default limit, so the deep graph
#   fails); no source rule to break, so no integrity row is required


def dfs_order(roots):
    """Every node reachable from roots, each once, each before the nodes it feeds (reversed DFS post-order)."""
    seen, post = set(), []

    def step(me, node):
        seen.add(node)
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                me(me, nxt)
        post.append(node)

    for r in roots:
        if r is not None and r not in seen:
            step(step, r)
    return post[::-1]
