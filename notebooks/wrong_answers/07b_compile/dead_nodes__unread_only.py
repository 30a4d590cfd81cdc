# Calls a node dead only when no node at all reads it: a chain whose end is unused stays "live".
def dead_nodes(graph):
    """The nodes nothing live needs, in program order."""
    read = set()
    for node in graph.nodes:
        read.update(id(a) for a in node.inputs)
    return [n for n in graph.nodes if id(n) not in read and n.op not in ("output", "check")
            and n.mutates is None]
