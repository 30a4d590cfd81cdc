# Compares target and positional arguments only: two calls that differ in a keyword argument are merged.
def eliminate_common_subexpressions(graph):
    """Merge calls that repeat an earlier call (same target, same arguments); return how many were removed."""
    written = {n.mutates.storage for n in graph.nodes if n.mutates is not None}

    def same(a, b):
        if isinstance(a, Node) or isinstance(b, Node):
            return a is b
        if type(a) is not type(b):
            return False
        if type(a) in (tuple, list):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        return bool(np.all(a == b))

    seen, removed = [], 0
    for node in list(graph.nodes):
        if node.op != "call":
            continue
        if node.mutates is not None:  # a write: what was seen before may read changed memory
            touched = node.mutates.storage
            seen = [s for s in seen if touched not in {s.storage} | {a.storage for a in s.inputs}]
            continue
        if node.storage in written:
            continue
        match = next((s for s in seen if s.target is node.target and same(s.args, node.args)), None)
        if match is None:
            seen.append(node)
            continue
        replace_uses(graph, node, match)
        graph.nodes.remove(node)
        removed += 1
    return removed
