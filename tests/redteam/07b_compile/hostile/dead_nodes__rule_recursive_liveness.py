# attack: liveness by a recursive mark from the output (the exercise forbids recursion), limit raised
#   through an alias of sys
# expect: 0 points for dead_nodes; integrity.csv row
import sys as _s

_s.setrecursionlimit(50000)


def dead_nodes(graph):
    """The nodes nothing live needs, in program order."""
    live = set()

    def mark(node):
        if id(node) in live:
            return
        live.add(id(node))
        for n in node.inputs:
            mark(n)

    for node in graph.nodes:
        if node.op in ("output", "check") or node.mutates is not None:
            mark(node)
    return [n for n in graph.nodes if id(n) not in live]
