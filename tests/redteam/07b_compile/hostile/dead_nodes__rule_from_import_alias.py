# attack: the library's dead-code pass imported under another name and run on a shallow copy of the graph
# expect: 0 points for dead_nodes; integrity.csv row
import copy

from chibigrad.compile.passes import eliminate_dead_code as _tidy


def dead_nodes(graph):
    """The nodes nothing live needs, in program order."""
    shadow = copy.copy(graph)
    shadow.nodes = list(graph.nodes)
    _tidy(shadow)
    kept = {id(n) for n in shadow.nodes}
    return [n for n in graph.nodes if id(n) not in kept]
