# style: counting users backwards, as fx does, in a local helper named eliminate_dead_code_like and a
#   comment naming the library's pass; no recursion, no call of the library's pass
# expect: full points for dead_nodes; no integrity row
from collections import Counter


def eliminate_dead_code_like(nodes):
    """Ids of the nodes nothing live needs (the library's eliminate_dead_code removes the same ones)."""
    users = Counter(id(n) for node in nodes for n in node.inputs)
    dead = set()
    for node in reversed(nodes):
        if users[id(node)] == 0 and node.op not in ("output", "check") and node.mutates is None:
            dead.add(id(node))
            for n in node.inputs:
                users[id(n)] -= 1
    return dead


def dead_nodes(graph):
    """The nodes nothing live needs, in program order."""
    dead = eliminate_dead_code_like(list(graph.nodes))
    return [n for n in graph.nodes if id(n) in dead]
