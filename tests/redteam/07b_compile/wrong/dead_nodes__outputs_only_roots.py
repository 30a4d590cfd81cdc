# mistake: only the output (and checks) are roots of the live set: a call that writes into an array is
#   dead when nothing reads its result
# expect: 0 points for dead_nodes
def dead_nodes(graph):
    """The nodes nothing live needs, in program order."""
    live, stack = set(), [n for n in graph.nodes if n.op in ("output", "check")]
    while stack:
        node = stack.pop()
        if id(node) in live:
            continue
        live.add(id(node))
        stack.extend(node.inputs)
    return [n for n in graph.nodes if id(n) not in live]
