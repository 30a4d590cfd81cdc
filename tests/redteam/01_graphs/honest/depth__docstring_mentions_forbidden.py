# style: the forbidden names appear only in the docstring and a comment ("unlike topological_order ...")
# expect: full points for depth; no integrity row


def depth(t):
    """Number of nodes on the longest path from t.grad_fn to the end of the graph (0 without grad_fn).

    Unlike topological_order or _count_dependencies in chibigrad.autograd.engine, this keeps its own
    explicit stack and memo of longest paths.
    """
    if t.grad_fn is None:
        return 0
    longest = {}
    stack = [(t.grad_fn, False)]
    while stack:
        node, expanded = stack.pop()
        if node in longest:
            continue
        nxt = [m for m, _ in node.next_functions if m is not None]
        if expanded:
            longest[node] = 1 + max((longest[m] for m in nxt), default=0)
        else:
            stack.append((node, True))
            stack.extend((m, False) for m in nxt if m not in longest)  # not the engine's topological_order
    return longest[t.grad_fn]
