# mistake: looks for Node arguments at the top level of args and kwargs only, so a Node inside a tuple
#   (np.concatenate((a, b))) is not seen: the call is folded although it reads a placeholder
# expect: 0 points for fold
def fold_constants(graph):
    """Replace calls on constants by their values; return how many were folded."""
    written = {n.mutates.storage for n in graph.nodes if n.op == "call" and n.mutates is not None}
    folded = 0
    for node in list(graph.nodes):
        if node.op != "call" or node.mutates is not None or node.storage in written:
            continue
        ins = [a for a in list(node.args) + list(node.kwargs.values()) if isinstance(a, Node)]
        if all(n.op == "constant" and n.storage not in written for n in ins):
            args = [a.value if isinstance(a, Node) else a for a in node.args]
            kwargs = {k: v.value if isinstance(v, Node) else v for k, v in node.kwargs.items()}
            const = make_constant(graph, node.target(*args, **kwargs))
            graph.nodes[graph.nodes.index(node)] = const
            replace_uses(graph, node, const)
            folded += 1
    return folded
