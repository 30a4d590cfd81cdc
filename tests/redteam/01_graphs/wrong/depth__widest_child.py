# mistake: follows one path only, always to the child with the most inputs, and counts its length
#   (right on chains and on the visible examples; the control for hostile depth__frame_peek)
# expect: 0 points for depth
def depth(t):
    """Number of nodes on the longest path from t.grad_fn to the end of the graph (0 without grad_fn)."""
    n, node = 0, t.grad_fn
    while node is not None:
        n += 1
        nxt = [m for m, _ in node.next_functions if m is not None]
        node = max(nxt, key=lambda m: len(m.next_functions)) if nxt else None
    return n
