"""The audit of a trace: Python code the guards cannot see into is a graph break.

The guards (``guards.py``) re-read every Python value a step can reach from its arguments,
closures and globals, and the functions it can reach that way. While the step is traced,
``sys.setprofile`` shows every function that actually runs. Three kinds of call would let a
value into the graph that no guard re-reads, so each is a graph break (the step runs
eagerly, and ``explain`` says why):

- a function of yours (not chibigrad, numpy or the standard library) the walk did not
  reach (a ``functools.partial``, a method of an object made elsewhere): its globals and
  closure are not guarded;
- a generator or iterator started before the step and resumed inside it (``next(batches)``):
  its position is Python state no guard can compare;
- a value from outside the program: Python's or numpy's random numbers, the clock,
  ``input()``, a file.
"""
import dis
import os
import random
import sys
import sysconfig

import numpy as np

_LIBRARY_DIRS = tuple({os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
                       os.path.dirname(np.__file__) + os.sep,
                       *(sysconfig.get_paths()[k] + os.sep for k in ("stdlib", "platstdlib", "purelib", "platlib"))})
_OUTSIDE_MODULES = ("time", "_random", "secrets", "uuid")
_OUTSIDE_BUILTINS = {input, open}
_RESUME = dis.opmap["RESUME"]  # (Python 3.11 and later) its argument is 0 where a function starts
_CO_GENERATOR_LIKE = 0x20 | 0x80 | 0x200  # generators, coroutines, async generators


def is_library(filename):
    """Code of chibigrad, numpy, the standard library or an installed package (not the user's)."""
    return filename.startswith(_LIBRARY_DIRS) or filename.startswith("<frozen") or \
        filename.startswith("<chibigrad.compile")


class Audit:
    """``with Audit(reached, on_break):`` calls ``on_break(reason)`` for the first call above."""

    def __init__(self, reached, on_break):
        self.reached, self.on_break, self._user, self._started = reached, on_break, {}, set()

    def __enter__(self):
        self._previous = sys.getprofile()
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc):
        sys.setprofile(self._previous)
        self._started.clear()

    def _profile(self, frame, event, arg):
        if event == "call":
            code = frame.f_code
            user = self._user.get(code)
            if user is None:
                user = self._user[code] = not is_library(code.co_filename)
            if user:
                self._check_user(frame, code)
        elif event == "c_call" and _from_outside(arg):
            self.on_break(f"{_qualname(arg)}() reads a value from outside the program (random numbers, the "
                          "clock, an iterator's position); it would be frozen into the graph")

    def _check_user(self, frame, code):
        if code.co_flags & _CO_GENERATOR_LIKE:
            if code.co_code[frame.f_lasti] == _RESUME and code.co_code[frame.f_lasti + 1] == 0:
                self._started.add(frame)
            elif frame not in self._started:
                self.on_break(f"the step resumes {code.co_name}, a generator started before it: its position "
                              "is Python state no guard can compare")
                return
        if code not in self.reached and not (code.co_flags & _CO_GENERATOR_LIKE and frame in self._started):
            self.on_break(f"the step calls {code.co_name} ({os.path.basename(code.co_filename)}:"
                          f"{code.co_firstlineno}), which its guards cannot see into (reach it from a global, a "
                          "closure or an argument as a plain function or method)")


def _from_outside(fn):
    if fn in _OUTSIDE_BUILTINS:
        return True
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, (random.Random, np.random.Generator, np.random.RandomState, np.random.BitGenerator)):
        return True
    module = getattr(fn, "__module__", None) or ""
    return module in _OUTSIDE_MODULES or module.startswith("numpy.random")


def _qualname(fn):
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))
