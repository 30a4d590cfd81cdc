# mistake: the key of a call is its target and positional arguments only: two calls that differ only in a
#   keyword argument (axis=0 and axis=1, dtype=...) are merged
# expect: 0 points for cse


def eliminate_common_subexpressions(graph):
    """Merge call nodes that compute the same value; return how many were removed."""
    written = {n.mutates.storage for n in graph.nodes if n.op == "call" and n.mutates is not None}
    seen, removed = {}, 0
    for node in list(graph.nodes):
        if node.op != "call":
            continue
        if node.mutates is not None:
            seen = {k: v for k, v in seen.items() if node.mutates.storage not in {i.storage for i in v.inputs}}
            continue
        if node.storage in written:
            continue
        key = (id(node.target),) + tuple(("node", id(a)) if isinstance(a, Node) else ("value", type(a), repr(a))
                                         for a in node.args)
        if key in seen:
            replace_uses(graph, node, seen[key])
            graph.nodes.remove(node)
            removed += 1
        else:
            seen[key] = node
    return removed
