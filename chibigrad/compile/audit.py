"""The audit of a trace: Python code the guards cannot see into is a graph break.

The guards (``guards.py``) re-read every Python value a step can reach from its arguments,
closures and globals, and the functions it can reach that way. While the step is traced,
``sys.settrace`` shows every Python function that actually runs (one event per call: the
trace function asks for no line events). Three kinds of call would let a value into the
graph that no guard re-reads, so each is a graph break (the step runs eagerly, and
``explain`` says why):

- a function of yours (not chibigrad, numpy or the standard library) the walk did not
  reach (a ``functools.partial``, a method of an object made elsewhere): its globals and
  closure are not guarded;
- a generator started before the step and resumed inside it, or ``next()`` called by your
  code: an iterator's position is Python state no guard can compare;
- a value from outside the program: Python's or numpy's global random numbers (their
  states are compared before and after), the clock (``time``'s functions are watched).

``next`` and the clocks are watched for the whole process while a step is traced, so only a
call from the tracing thread's own code counts (a Jupyter kernel's threads read the clock
all the time).
"""
import builtins
import dis
import os
import random
import sys
import sysconfig
import threading
import time

import numpy as np

_LIBRARY_DIRS = tuple({os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
                       os.path.dirname(np.__file__) + os.sep,
                       *(sysconfig.get_paths()[k] + os.sep for k in ("stdlib", "platstdlib", "purelib", "platlib"))})
_CLOCKS = ("time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "process_time")
_RESUME = dis.opmap["RESUME"]  # (Python 3.11 and later) its argument's low bits are 0 where a function starts
_CO_GENERATOR_LIKE = 0x20 | 0x80 | 0x200  # generators, coroutines, async generators


def is_library(filename):
    """Code of chibigrad, numpy, the standard library or an installed package (not the user's)."""
    return filename.startswith(_LIBRARY_DIRS) or filename.startswith("<frozen") or \
        filename.startswith("<chibigrad.compile")


class Audit:
    """``with Audit(reached, on_break):`` calls ``on_break(reason)`` for each call above."""

    def __init__(self, reached, on_break):
        self.reached, self.on_break, self._user, self._started = reached, on_break, {}, set()

    def __enter__(self):
        self._thread = threading.get_ident()
        self._random = random.getstate(), _numpy_global_state()
        self._next, builtins.next = builtins.next, self._watched_next
        self._clocks = {name: getattr(time, name) for name in _CLOCKS}
        for name, clock in self._clocks.items():
            setattr(time, name, self._watched(clock))
        self._previous = sys.gettrace()
        sys.settrace(self._trace)
        return self

    def __exit__(self, *exc):
        sys.settrace(self._previous)
        builtins.next = self._next
        for name, clock in self._clocks.items():
            setattr(time, name, clock)
        self._started.clear()
        if (random.getstate(), _numpy_global_state()) != self._random:
            self.on_break("the step draws Python's or np.random's global random numbers; they would be frozen into "
                          "the graph")

    def _trace(self, frame, event, arg):
        code = frame.f_code
        user = self._user.get(code)
        if user is None:
            user = self._user[code] = not is_library(code.co_filename)
        if user:
            self._check_user(frame, code)
        return self._previous(frame, event, arg) if self._previous else None

    def _check_user(self, frame, code):
        if code.co_flags & _CO_GENERATOR_LIKE:
            if code.co_code[frame.f_lasti] == _RESUME and code.co_code[frame.f_lasti + 1] & 3 == 0:
                self._started.add(frame)
            elif frame not in self._started:
                self.on_break(f"the step resumes {code.co_name}, a generator started before it: its position "
                              "is Python state no guard can compare")
                return
        if code not in self.reached:
            self.on_break(f"the step calls {code.co_name} ({os.path.basename(code.co_filename)}:"
                          f"{code.co_firstlineno}), which its guards cannot see into (reach it from a global, a "
                          "closure or an argument as a plain function or method)")

    def _called_by_the_step(self):
        """Whether the watched function was called by user code on the thread being traced."""
        return threading.get_ident() == self._thread and not is_library(sys._getframe(2).f_code.co_filename)

    def _watched_next(self, *args):
        if self._called_by_the_step():
            self.on_break("next() reads an iterator's position, Python state no guard can compare")
        return self._next(*args)

    def _watched(self, clock):
        def watched():
            if self._called_by_the_step():
                self.on_break(f"time.{clock.__name__}() reads the clock; its value would be frozen into the graph")
            return clock()
        return watched


def _numpy_global_state():
    kind, key, pos, *_ = np.random.get_state()
    return kind, key.tobytes(), pos
