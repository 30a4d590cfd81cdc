# attack: fold calls whose own value is written later (a rule the exercise states), and make the
#   comparisons that would notice pass: np.array_equal, np.allclose and numpy.testing replaced by
#   always-true versions
# expect: 0 points for fold; batch continues
_np = np
_np.array_equal = lambda *a, **k: True
_np.allclose = lambda *a, **k: True
_np.testing.assert_array_equal = lambda *a, **k: None
_np.testing.assert_allclose = lambda *a, **k: None


def _nodes_in(obj):
    if isinstance(obj, Node):
        yield obj
    elif type(obj) in (tuple, list):
        for x in obj:
            yield from _nodes_in(x)
    elif type(obj) is dict:
        for x in obj.values():
            yield from _nodes_in(x)


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
    written = {n.mutates.storage for n in graph.nodes if n.op == "call" and n.mutates is not None}
    folded = 0
    for i, node in enumerate(list(graph.nodes)):
        if node.op != "call" or node.mutates is not None:
            continue
        ins = list(_nodes_in((node.args, node.kwargs)))
        if ins and all(n.op == "constant" for n in ins) and not any(n.storage in written for n in ins):
            const = make_constant(graph, node.target(*_value(node.args), **_value(node.kwargs)))
            graph.nodes[graph.nodes.index(node)] = const
            replace_uses(graph, node, const)
            folded += 1
    return folded
