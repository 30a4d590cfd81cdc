# mistake: folds every call on constants, forgetting that a constant the program writes into changes
#   during the run
# expect: 0 points for fold
def _has_placeholder(obj):
    if isinstance(obj, Node):
        return obj.op != "constant"
    if type(obj) in (tuple, list):
        return any(_has_placeholder(x) for x in obj)
    if type(obj) is dict:
        return any(_has_placeholder(x) for x in obj.values())
    return False


def _value(obj):
    if isinstance(obj, Node):
        return obj.value
    if type(obj) in (tuple, list):
        return type(obj)(_value(x) for x in obj)
    if type(obj) is dict:
        return {k: _value(v) for k, v in obj.items()}
    return obj


def fold_constants(graph):
    """Replace calls on constants by their values; return how many were folded."""
    folded = 0
    for node in list(graph.nodes):
        if node.op != "call" or node.mutates is not None or _has_placeholder((node.args, node.kwargs)):
            continue
        const = make_constant(graph, node.target(*_value(node.args), **_value(node.kwargs)))
        graph.nodes[graph.nodes.index(node)] = const
        replace_uses(graph, node, const)
        folded += 1
    return folded
