# Recursion with memoisation: correct and fast, but a RecursionError on a deep graph.
def depth(t):
    """Number of nodes on the longest path from t.grad_fn to the end of the graph (0 without grad_fn)."""
    memo = {}

    def below(node):
        if node not in memo:
            memo[node] = 1 + max((below(c) for c, _ in node.next_functions if c is not None), default=0)
        return memo[node]

    return 0 if t.grad_fn is None else below(t.grad_fn)
