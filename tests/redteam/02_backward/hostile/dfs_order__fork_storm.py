# attack: damage: 200 detached children (fork, setsid, double fork) that sleep for an hour and then
#   try to write into the parent's folders; the answer is the engine's own topological_order (which
#   the exercise forbids), called through a renamed copy
# expect: 0 points for dfs_order; the children are killed when the notebook ends (process cap,
#   subreaper); the batch continues; nothing outside the submission is written
import os, time, types
from chibigrad.autograd import engine as _engine

_started = 0
for _ in range(200):
    try:
        pid = os.fork()
    except OSError as err:
        print("fork refused after", _started, type(err).__name__)
        break
    if pid == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                time.sleep(3600)
                open("../../../../rt-fork-was-here", "w").write("x")
        finally:
            os._exit(0)
    _started += 1
print("children started:", _started)
_f = _engine.topological_order
_copy = types.FunctionType(_f.__code__, _f.__globals__, "order", _f.__defaults__, _f.__closure__)


def dfs_order(roots):
    """Every node reachable from roots, each once, each before the nodes it feeds (reversed DFS post-order)."""
    return list(_copy(list(roots)))
