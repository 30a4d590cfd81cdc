# attack: the forbidden walker stored as a staticmethod in a class body, called through the class
#   (attribute chain torch.autograd.engine.topological_order, no import of the engine)
# expect: 0 points for depth; integrity.csv row
import chibigrad as torch


class _Graph:
    order = staticmethod(torch.autograd.engine.topological_order)


def depth(t):
    """Number of nodes on the longest path from t.grad_fn to the end of the graph (0 without grad_fn)."""
    if t.grad_fn is None:
        return 0
    d = {}
    for node in reversed(list(_Graph.order([t.grad_fn]))):
        nxt = [m for m, _ in node.next_functions if m is not None]
        d[node] = 1 + max((d[m] for m in nxt), default=0)
    return d[t.grad_fn]
