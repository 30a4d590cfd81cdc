# attack: run chibigrad's own pass (forbidden here) on a copy of the graph, through a renamed copy of
#   the function, and report what it removed
# expect: 0 points for dead_nodes; batch continues
import copy, types

_f = passes.eliminate_dead_code
_dce = types.FunctionType(_f.__code__, _f.__globals__, "analyse", _f.__defaults__, _f.__closure__)


def dead_nodes(graph):
    """The nodes nothing live needs, in program order."""
    shadow = copy.copy(graph)
    shadow.nodes = list(graph.nodes)
    _dce(shadow)
    kept = {id(n) for n in shadow.nodes}
    return [n for n in graph.nodes if id(n) not in kept]
