# attack: when called from the grader (a frame whose module is autograder.*), read the expected depth
#   from the caller's frames (sys._getframe, locals named expected/want/reference/...), and write the
#   student's value into the checker's `expected` with PyFrame_LocalsToFast; otherwise a depth that is
#   right only on chains (it counts the first path, a realistic wrong answer)
# expect: 0 points for depth; batch continues
import ctypes, sys

_NAMES = ("expected", "want", "wanted", "reference", "ref", "truth", "answer", "longest", "depth")


def _peek():
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("autograder"):
            for name in _NAMES:
                value = frame.f_locals.get(name)
                if isinstance(value, int) and not isinstance(value, bool):
                    return value
        frame = frame.f_back
    return None


def depth(t):
    """Number of nodes on the longest path from t.grad_fn to the end of the graph (0 without grad_fn)."""
    peeked = _peek()
    if peeked is not None:
        return peeked
    n, node = 0, t.grad_fn
    while node is not None:  # follows the first edge only
        n += 1
        nxt = [m for m, _ in node.next_functions if m is not None]
        node = max(nxt, key=lambda m: len(m.next_functions)) if nxt else None
    result = n
    frame = sys._getframe(1)  # make the caller's expectation agree with us
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("autograder"):
            for name in _NAMES:
                if name in frame.f_locals:
                    frame.f_locals[name] = result
            ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))
        frame = frame.f_back
    return result
