# mistake: removes duplicates with `leaf not in leaves`, which compares tensors with == (values), so
#   two different leaves holding the same value count as one
# expect: 0 points for find_leaves
def find_leaves(t):
    """The .variable of every AccumulateGrad node reachable from t.grad_fn, each once."""
    leaves = []
    stack = [t.grad_fn] if t.grad_fn is not None else []
    seen = set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if isinstance(node, AccumulateGrad) and node.variable not in leaves:
            leaves.append(node.variable)
        stack.extend(p for p, _ in node.next_functions if p is not None)
    return leaves
