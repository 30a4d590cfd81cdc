# attack: the forbidden walker reached by a computed getattr on the engine module, its name split in two strings
# expect: integrity.csv row (dynamic access)
from chibigrad.autograd import engine as _e

_walk = getattr(_e, "topo" + "logical_order")


def depth(t):
    """Number of nodes on the longest path from t.grad_fn to the end of the graph (0 without grad_fn)."""
    if t.grad_fn is None:
        return 0
    d = {}
    for node in reversed(list(_walk([t.grad_fn]))):
        nxt = [m for m, _ in node.next_functions if m is not None]
        d[node] = 1 + max((d[m] for m in nxt), default=0)
    return d[t.grad_fn]
