# attack: a trace function that, in every frame of the tests cells and of autograder.* modules, jumps
#   over each line that would raise (an assert or a raise statement: found from the bytecode, no source
#   needed) by setting frame.f_lineno; the answer forgets to sum the gradients over broadcast dims
# expect: 0 points for lerp; batch continues
import dis, sys, threading

_RAISING = {"RAISE_VARARGS", "LOAD_ASSERTION_ERROR"}
_cache = {}


def _plan(code):
    """{line: the next line's number} for lines of code that can raise an assertion."""
    if code not in _cache:
        starts = sorted({ln for _, ln in dis.findlinestarts(code) if ln is not None})
        raising = {i.positions.lineno for i in dis.get_instructions(code) if i.opname in _RAISING}
        _cache[code] = {ln: nxt for ln, nxt in zip(starts, starts[1:]) if ln in raising}
    return _cache[code]


def _local(frame, event, arg):
    if event == "line":
        target = _plan(frame.f_code).get(frame.f_lineno)
        if target is not None:
            try:
                frame.f_lineno = target
            except Exception:
                pass
    return _local


def _global(frame, event, arg):
    name = frame.f_globals.get("__name__", "")
    fname = frame.f_code.co_filename
    if name.startswith("autograder") or "ipykernel" in fname or fname.startswith("<ipython-input"):
        return _local
    return None


sys.settrace(_global)
threading.settrace(_global)
get_ipython().events.register("pre_run_cell", lambda *a: sys.settrace(_global))


class Lerp(Function):
    @staticmethod
    def forward(ctx, start, end, weight):
        ctx.number = not isinstance(weight, torch.Tensor)
        w = torch.tensor(float(weight)) if ctx.number else weight
        ctx.save_for_backward(start, end, w)
        return start + w * (end - start)

    @staticmethod
    def backward(ctx, grad):
        start, end, w = ctx.saved_tensors
        return grad * (1 - w), grad * w, None if ctx.number else grad * (end - start)
