"""The student process's side of judged grading: answer the judge's calls with plain data.

This module runs inside the kernel that runs the submission (sandboxed as every grading kernel, with the
student edition of chibigrad and without ``autograder.checks`` on its path). The judge, in another process,
sends a :class:`~autograder.grading.protocol.Call` as one short execute request::

    __import__("autograder.grading.runner", fromlist=["_"]).serve('{"name": "walk", ...}')

:func:`serve` runs the release's locked setup code again if asked (so cases are built with the
instructor's classes, not ones a later cell replaced), builds the case from its recipe
(:mod:`autograder.grading.cases`), calls the student's function under Python's default recursion limit,
observes the result and publishes a :class:`~autograder.grading.protocol.Reply` on the kernel's output
channel. Nothing here decides a grade: a submission that replaces this module can only change the data
it hands back, and the judge checks that data against answers it never sent.
"""
import contextlib
import functools
import io
import sys
import warnings

from . import cases, protocol

RECURSION_LIMIT = 1000  # Python's default: graphs built by loops are far deeper, so recursion fails on them


class _Raised(Exception):
    """The student's function raised: carries the original error out of the observer."""


def _depth():
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def _call(fn, *args):
    """``fn(*args)`` under the default recursion limit (counted from here, as in a fresh notebook cell)."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(RECURSION_LIMIT + _depth())
    try:
        return fn(*args)
    except BaseException as err:
        if isinstance(err, (KeyboardInterrupt, SystemExit)):
            raise
        raise _Raised() from err
    finally:
        sys.setrecursionlimit(old)


@functools.lru_cache(maxsize=2)
def _compiled(setup):
    """The setup's code, compiled once per kernel: compiling it took 7 of a call's 18 ms, running it 0.5."""
    return compile(setup, "<setup>", "exec")


def answer(call, namespace):
    """The :class:`~autograder.grading.protocol.Reply` to ``call`` in the notebook's ``namespace``, as JSON text
    (a value that is not plain data is encoded once, and found out then)."""
    if call.setup:
        exec(_compiled(call.setup), namespace)
    fn = namespace.get(call.name)
    if not callable(fn):
        return protocol.Reply(ok=False, error="NameError",
                              message=f"the notebook defines no function {call.name!r} (run its cells in order)"
                              ).to_json()
    stdout = io.StringIO()
    try:
        args, context = cases.build(call.case, namespace)
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(stdout):
            warnings.simplefilter("always")
            value = cases.observe(call.observe, fn, args, context, _call)
    except _Raised as raised:
        err = raised.__cause__
        return protocol.Reply(ok=False, error=type(err).__name__, message=str(err)[:2000],
                              stdout=stdout.getvalue()[-2000:]).to_json()
    except Exception as err:  # building the case failed: the setup's classes are not what the release defines
        return protocol.Reply(ok=False, error="CaseError", message=f"{type(err).__name__}: {err}"[:2000]).to_json()
    warning = f"{caught[0].category.__name__}: {caught[0].message}" if caught else ""
    try:
        return protocol.Reply(ok=True, value=value, warning=warning, stdout=stdout.getvalue()[-2000:]).to_json()
    except protocol.ProtocolError as err:
        return protocol.Reply(ok=False, error="TypeError", message=f"returned {err}").to_json()


def serve(request):
    """Answer one request (JSON text) on the kernel's output channel, as a display of type ``protocol.MIME``."""
    from IPython import get_ipython
    from IPython.display import publish_display_data
    shell = get_ipython()
    publish_display_data({protocol.MIME: answer(protocol.Call.from_json(request), shell.user_ns)})
