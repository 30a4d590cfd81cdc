# mistake: walks recursively (the article's walker, with a seen set), so a graph built by a loop
#   overflows Python's recursion limit
# expect: 0 points for walk (RecursionError on the 10,000- and 50,000-node chains)
def walk(t):
    """Every node reachable from t.grad_fn, each once, t.grad_fn first."""
    if t.grad_fn is None:
        return []
    seen, order = set(), []

    def visit(node):
        if node is None or node in seen:
            return
        seen.add(node)
        order.append(node)
        for parent, _ in node.next_functions:
            visit(parent)

    visit(t.grad_fn)
    return order
