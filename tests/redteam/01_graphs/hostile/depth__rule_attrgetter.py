# attack: the forbidden walker reached through operator.attrgetter on the chibigrad package (a dotted string)
# expect: integrity.csv row (dynamic access)
import operator

import chibigrad as _cg
import chibigrad.autograd.engine  # noqa: F401  (loads the submodule)

_walk = operator.attrgetter("autograd.engine.topological_order")(_cg)


def depth(t):
    """Number of nodes on the longest path from t.grad_fn to the end of the graph (0 without grad_fn)."""
    if t.grad_fn is None:
        return 0
    d = {}
    for node in reversed(list(_walk([t.grad_fn]))):
        nxt = [m for m, _ in node.next_functions if m is not None]
        d[node] = 1 + max((d[m] for m in nxt), default=0)
    return d[t.grad_fn]
