# mistake: compares number arguments with == only, so x + 1 and x + 1.0 (int64 and float64 results) are
#   merged
# expect: 0 points for cse


def eliminate_common_subexpressions(graph):
    """Merge call nodes that compute the same value; return how many were removed."""
    written = {n.mutates.storage for n in graph.nodes if n.op == "call" and n.mutates is not None}
    kept, removed = [], 0
    for node in list(graph.nodes):
        if node.op != "call":
            continue
        if node.mutates is not None:
            kept = [k for k in kept if node.mutates.storage not in {i.storage for i in k.inputs}]
            continue
        if node.storage in written:
            continue
        twin = next((k for k in kept if k.target is node.target and len(k.args) == len(node.args)
                     and all(a is b if isinstance(a, Node) else a == b for a, b in zip(k.args, node.args))
                     and k.kwargs == node.kwargs), None)
        if twin is not None:
            replace_uses(graph, node, twin)
            graph.nodes.remove(node)
            removed += 1
        else:
            kept.append(node)
    return removed
