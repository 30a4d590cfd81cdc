# Decides what to fold before folding anything: a call on a constant made by folding is left alone.
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
    foldable = [n for n in graph.nodes if n.op == "call" and n.mutates is None and n.storage not in written
                and all(a.op == "constant" and a.storage not in written for a in n.inputs)]
    for i, node in enumerate(graph.nodes):
        if node not in foldable:
            continue
        if node.op != "call" or node.mutates is not None:
            continue
        if node.storage not in written and all(a.op == "constant" and a.storage not in written
                                               for a in node.inputs):
            constant = make_constant(graph, node.target(*value(node.args), **value(node.kwargs)))
            graph.nodes[i] = constant
            replace_uses(graph, node, constant)
            folded += 1
    return folded
