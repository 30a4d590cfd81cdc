# Deduplicates with `in`, which compares tensors by value: two leaves holding 1.0 become one.
def find_leaves(t):
    """The .variable of every AccumulateGrad node reachable from t.grad_fn, each once."""
    leaves = []
    stack = [t.grad_fn] if t.grad_fn is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, AccumulateGrad) and node.variable not in leaves:
            leaves.append(node.variable)
        stack.extend(child for child, _ in node.next_functions if child is not None)
    return leaves
