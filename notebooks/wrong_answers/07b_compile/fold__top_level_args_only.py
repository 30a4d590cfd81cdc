# Looks for constants among the top-level arguments only: a Node inside a tuple (np.concatenate((x, c))) is missed.
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
        if node.op != "call" or node.mutates is not None or node.storage in written:
            continue
        top = [a for a in (*node.args, *node.kwargs.values()) if isinstance(a, Node)]
        if all(a.op == "constant" and a.storage not in written for a in top):
            constant = make_constant(graph, node.target(*value(node.args), **value(node.kwargs)))
            graph.nodes.insert(graph.nodes.index(node), constant)
            graph.nodes.remove(node)
            replace_uses(graph, node, constant)
            folded += 1
    return folded
