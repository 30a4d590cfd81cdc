# Recursive search for the AccumulateGrad nodes: right on small graphs, RecursionError on a deep one.
def find_leaves(t):
    """The .variable of every AccumulateGrad node reachable from t.grad_fn, each once."""
    leaves, seen = [], set()

    def visit(node):
        if node is None or node in seen:
            return
        seen.add(node)
        if isinstance(node, AccumulateGrad):
            leaves.append(node.variable)
        for child, _ in node.next_functions:
            visit(child)

    if t.grad_fn is not None:
        visit(t.grad_fn)
    return leaves
