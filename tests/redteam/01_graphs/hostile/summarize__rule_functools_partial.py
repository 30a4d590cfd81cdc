# attack: the forbidden walker wrapped in functools.partial and a lambda, the module imported under an alias
# expect: 0 points for summarize; integrity.csv row
import functools

from chibigrad.autograd import engine as eng

_nodes = functools.partial(eng.topological_order)
_visit = lambda root: _nodes([root])  # noqa: E731


def summarize(t):
    """{node name: number of distinct nodes with that name} for the graph of t."""
    if t.grad_fn is None:
        return {}
    counts = {}
    for node in _visit(t.grad_fn):
        counts[node.name()] = counts.get(node.name(), 0) + 1
    return counts
