# Marks live nodes by recursion from the output: a long chain overflows Python's stack.
def dead_nodes(graph):
    """The nodes nothing live needs, in program order."""
    live = set()

    def mark(node):
        if id(node) in live:
            return
        live.add(id(node))
        for a in node.inputs:
            mark(a)

    for node in graph.nodes:
        if node.op in ("output", "check") or node.mutates is not None:
            mark(node)
    return [n for n in graph.nodes if id(n) not in live]
