# attack: call the engine's own walker, which the exercise forbids, through a copy of the function
#   (types.FunctionType on its __code__), so a guard that swaps the original's __code__ misses it;
#   falls back to the original if the copy is refused
# expect: 0 points for summarize (it is the engine's walk, not the student's); batch continues
import types
from chibigrad.autograd import engine as _engine

_orig = _engine.topological_order
_copy = types.FunctionType(_orig.__code__, _orig.__globals__, "helper", _orig.__defaults__, _orig.__closure__)


def summarize(t):
    """{node name: number of distinct nodes with that name} for the graph of t."""
    if t.grad_fn is None:
        return {}
    counts = {}
    for node in _copy([t.grad_fn]):
        counts[node.name()] = counts.get(node.name(), 0) + 1
    return counts
