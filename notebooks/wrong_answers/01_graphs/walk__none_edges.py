# Forgets that next_functions holds None for inputs that need no gradient (constants): AttributeError.
def walk(t):
    """Every node reachable from t.grad_fn, each once, t.grad_fn first."""
    if t.grad_fn is None:
        return []
    seen, found, stack = {t.grad_fn}, [], [t.grad_fn]
    while stack:
        node = stack.pop()
        found.append(node)
        for child, _ in node.next_functions:
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return found
