# Appends the new constant at the end of the graph, after the nodes that read it.
def fold_constants(graph):
    """Replace calls on constants by their values; return how many were folded."""
    written = {n.mutates.storage for n in graph.nodes if n.mutates is not None}

    def value(obj):
        if isinstance(obj, Node):
            return obj.value
        if type(obj) in (tuple, list):
            return type(obj)(value(x) for x in obj)
        if type(obj) is dict:
            return {k: value(v) for k, v in obj.items()}
        return obj

    folded = 0
    for node in list(graph.nodes):
        if node.op != "call" or node.mutates is not None:
            continue
        if node.storage not in written and all(a.op == "constant" and a.storage not in written
                                               for a in node.inputs):
            constant = make_constant(graph, node.target(*value(node.args), **value(node.kwargs)))
            graph.nodes.remove(node)
            graph.nodes.insert(-1, constant)
            replace_uses(graph, node, constant)
            folded += 1
    return folded
