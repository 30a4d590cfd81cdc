# Keeps only what the output and the checks read: a write into an array nobody reads later looks dead.
def dead_nodes(graph):
    """The nodes nothing live needs, in program order."""
    live = set()
    for node in reversed(graph.nodes):
        if node.op in ("output", "check") or id(node) in live:
            live.add(id(node))
            live.update(id(a) for a in node.inputs)
    return [n for n in graph.nodes if id(n) not in live]
