# attack: the forbidden engine walker imported under another name (from ... import topological_order as _order)
# expect: 0 points for summarize; integrity.csv row
from chibigrad.autograd.engine import topological_order as _order


def summarize(t):
    """{node name: number of distinct nodes with that name} for the graph of t."""
    if t.grad_fn is None:
        return {}
    counts = {}
    for node in _order([t.grad_fn]):
        counts[node.name()] = counts.get(node.name(), 0) + 1
    return counts
