# style: a keyword parameter named _count_dependencies (a bool flag of the student's own), never the engine's
# expect: full points for find_leaves; no integrity row


def find_leaves(t, _count_dependencies=False):
    """The .variable of every AccumulateGrad node reachable from t.grad_fn, each once."""
    if t.grad_fn is None:
        return []
    leaves, seen, stack, visits = [], {t.grad_fn}, [t.grad_fn], 0
    while stack:
        node = stack.pop()
        visits += 1
        if hasattr(node, "variable"):
            leaves.append(node.variable)
        for nxt, _ in reversed(node.next_functions):
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    if _count_dependencies:
        print(f"{visits} nodes visited")
    return leaves
