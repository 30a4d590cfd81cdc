# attack: the forbidden dependency counter read from the engine module's __dict__ by a constant key;
#   its keys are the nodes reachable besides the root
# expect: 0 points for summarize; integrity.csv row
from chibigrad.autograd import engine as _e

_deps = _e.__dict__["_count_dependencies"]


def summarize(t):
    """{node name: number of distinct nodes with that name} for the graph of t."""
    if t.grad_fn is None:
        return {}
    nodes = set(_deps([t.grad_fn])) | {t.grad_fn}
    counts = {}
    for node in nodes:
        counts[node.name()] = counts.get(node.name(), 0) + 1
    return counts
