# attack: make failing tests look passed: an IPython custom exception handler that swallows every
#   error silently (no error output), sys.excepthook replaced, a fake autograder.checks.a01_graphs in
#   sys.modules whose check_* do nothing, and a module __getattr__ on autograder.checks; the answer
#   returns the precomputed topological order (the trap the exercise warns about) without hooks
# expect: 0 points for trace_backward (and no points for any other exercise: they are stubs);
#   batch continues
import sys, types
from chibigrad.autograd.engine import topological_order

get_ipython().set_custom_exc((BaseException,), lambda shell, etype, evalue, tb, tb_offset=None: None)
sys.excepthook = lambda *args: None

_fake = types.ModuleType("autograder.checks.a01_graphs")
_fake.__getattr__ = lambda name: (lambda *args, **kwargs: None)
for _name in ("autograder.checks.a01_graphs", "autograder.checks", "autograder"):
    _mod = sys.modules.get(_name)
    if _mod is not None:
        try:
            setattr(_mod, "a01_graphs", _fake)
            for _attr in list(vars(_mod)):
                if _attr.startswith("check_"):
                    setattr(_mod, _attr, lambda *args, **kwargs: None)
        except Exception:
            pass
sys.modules["autograder.checks.a01_graphs"] = _fake


def trace_backward(loss):
    """Run loss.backward(); return the nodes in the order the engine ran them."""
    order = topological_order([loss.grad_fn])
    loss.backward()
    return list(order)
