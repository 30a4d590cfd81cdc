# Redirects only the call nodes that read the removed node, and only their positional arguments:
# the output (and keyword arguments) still name it.
def eliminate_common_subexpressions(graph):
    """Merge call nodes that compute the same value; return how many were removed."""
    def same(a, b):
        if isinstance(a, Node) or isinstance(b, Node):
            return a is b
        if type(a) is not type(b):
            return False
        if type(a) in (tuple, list):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        if type(a) is dict:
            return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        if isinstance(a, np.ndarray):
            return a is b
        return bool(a == b)

    written_ever = {n.mutates.storage for n in graph.nodes if n.mutates is not None}
    available, kept, removed = [], [], 0
    for node in graph.nodes:
        if node.op == "call" and node.mutates is not None:
            written = node.mutates.storage
            available = [n for n in available if n.storage != written and all(a.storage != written
                                                                                  for a in n.inputs)]
        elif node.op == "call" and node.storage not in written_ever:
            match = next((n for n in available if n.target is node.target and same(n.args, node.args)
                          and same(n.kwargs, node.kwargs)), None)
            if match is not None:
                for user in graph.nodes:
                    if user.op == "call":
                        user.args = tuple(match if a is node else a for a in user.args)
                removed += 1
                continue
            available.append(node)
        kept.append(node)
    graph.nodes = kept
    return removed
