"""Re-run a graded notebook's code in a fresh Python and confirm the test cells that passed.

Why: the hidden tests run in the same kernel as the student's code, and a student's cell can
replace anything there: the test helpers (``a03_graph_lifetime.check_hvp = lambda f: None``), the
oracles in chibigrad or numpy (``np.allclose = lambda *a, **k: True``), builtins (``len``),
IPython itself (an input transformer that blanks every later cell), or drop a fake
``autograder/`` package next to the notebook. A passing test cell in the kernel therefore
proves little. The worker runs this module (``python -m autograder.grading.sandbox verify``, inside
the same sandbox as the kernel) after the kernel, and a test cell keeps its points only if it
passes here too. Here:

1. numpy, every chibigrad module and every ``autograder.checks`` module are imported before
   any student code, from the installed packages (the notebook's folder is not on the path
   while they load), and a snapshot records every callable, class and module bound in them,
   in the classes defined there, in ``builtins`` and in the standard modules they use, plus
   every function's code, defaults and closure.
2. The cells run in order in one namespace, as in the kernel: student cells through an
   IPython shell (magics work), the instructor's cells (setup, tests) with ``exec``, so no
   IPython hook the student installed can touch them.
3. After every cell the snapshot is compared: whatever a student cell replaced is reported and
   put back before the tests run (the student keeps exactly the points their code earns on the
   real helpers); a test cell during which something was replaced fails. A trace or profile
   function left behind is removed and reported.
4. A test cell passes if it raises nothing, writes nothing to stderr and replaces nothing.

Each verdict is signed (HMAC-SHA256) with a key the worker sends on stdin before any student
code runs, and written with C functions captured at start, so printing a fake verdict does not
work. This raises the bar; it is not a proof: Python has no in-process isolation, and a student
who studies this file and reaches for ``ctypes`` or frame tricks can still defeat it. What the
OS enforces (``autograder.grading.sandbox``) holds regardless.
"""
import copy
import hmac
import json
import os
import sys

_MISSING = object()
_PREFIXES = ("numpy", "chibigrad", "autograder")
_CHECKS = "autograder.checks"
_SYS = ("setrecursionlimit", "getrecursionlimit", "_getframe", "exc_info", "exception", "getrefcount", "intern",
        "settrace", "gettrace", "setprofile", "getprofile", "addaudithook", "audit")
# chibigrad's own state that oracles read (its other module state, memory counters and RNGs, is legitimately the
# student's to change): the ordering every backward uses, dtype tables, testing tolerances
_GUARDED = {"chibigrad.autograd.engine": ("_ordering",), "chibigrad.testing": ("_TOLERANCES",),
            "chibigrad._dtype": ("_BY_NUMPY", "_PYTHON_TYPES")}
_SKIP = ("__main__", "sys", "IPython", "ipykernel", "traitlets", "zmq", "jupyter", "prompt_toolkit", "pygments")


def sign(index, ok, key):
    """The signed part of a verdict: the cell index and pass/fail, nothing a student can shape."""
    return hmac.digest(bytes.fromhex(key), f"{index}|{int(bool(ok))}".encode(), "sha256").hex()


def check_signature(line, key):
    """The verdict a line of the verifier's output carries, or None if its signature is wrong."""
    try:
        verdict = json.loads(line)
        expected = sign(verdict["index"], verdict["ok"], key)
    except (ValueError, KeyError, TypeError):
        return None
    if not hmac.compare_digest(str(verdict.get("mac", "")), expected):
        return None
    return verdict


def _monitored_modules():
    modules = {}
    for name, module in list(sys.modules.items()):
        if module is not None and (name == "builtins" or name.split(".")[0] in _PREFIXES):
            modules[name] = module
    for module in list(modules.values()):  # one level out: the standard modules they use
        for value in list(vars(module).values()):
            owner = value if type(value) is type(sys) else sys.modules.get(getattr(value, "__module__", None) or "")
            name = getattr(owner, "__name__", "")
            if owner is not None and type(owner) is type(sys) and name and not name.startswith(_SKIP):
                modules.setdefault(name, owner)
    return modules


def take_snapshot():
    """``(bindings, functions, cells, contents)``: what must not change, with references to the
    originals. Every module-level value of ``autograder.checks`` counts (a submission that sets
    ``checks.RECURSION_LIMIT = 200000`` or empties a list of cases must not change the checks),
    and so do the few functions of ``sys`` the checks rely on."""
    modules = _monitored_modules()
    bindings, functions, cells, contents, seen_classes, seen_functions = [], [], [], [], set(), set()

    def add_function(f):
        if id(f) in seen_functions:
            return
        seen_functions.add(id(f))
        functions.append((f, f.__code__, f.__defaults__, f.__kwdefaults__))
        for cell in f.__closure__ or ():
            try:
                held = cell.cell_contents
            except ValueError:
                continue
            if callable(held) or type(held) is type(sys):
                cells.append((cell, held))

    def add_value(value):
        for inner in (value, getattr(value, "__func__", None), getattr(value, "fget", None),
                      getattr(value, "fset", None), getattr(value, "__wrapped__", None)):
            if type(inner) is type(add_value):
                add_function(inner)
        if isinstance(value, type) and id(value) not in seen_classes and not value.__flags__ & (1 << 8):
            seen_classes.add(id(value))
            if (value.__module__ or "").split(".")[0] in _PREFIXES:
                for key, member in list(vars(value).items()):
                    if callable(member) or hasattr(member, "__get__"):
                        bindings.append((value, key, member, f"{value.__module__}.{value.__qualname__}.{key}"))
                        add_value(member)

    for name, module in modules.items():
        checks = name == _CHECKS or name.startswith(_CHECKS + ".")
        for key, value in list(vars(module).items()):
            if callable(value) or type(value) is type(sys):
                bindings.append((vars(module), key, value, f"{name}.{key}"))
                add_value(value)
            elif (checks and not key.startswith("__")) or key in _GUARDED.get(name, ()):  # the checks' constants
                bindings.append((vars(module), key, value, f"{name}.{key}"))
                if type(value) in (list, dict, set):
                    contents.append((value, copy.copy(value), f"the contents of {name}.{key}"))
        bindings.append((sys.modules, name, module, f"sys.modules[{name!r}]"))
    for key in _SYS:  # sys is not snapshotted whole (IPython and this module rebind its streams and hooks)
        if hasattr(sys, key):
            bindings.append((vars(sys), key, getattr(sys, key), f"sys.{key}"))
    return bindings, functions, cells, contents


def diff_and_restore(snapshot):
    """Names of what changed since ``snapshot``; each is put back. Written with syntax and the
    C methods of the objects themselves only, so replacing a builtin cannot blind it."""
    bindings, functions, cells, contents = snapshot
    changed = []
    for container, key, value, name in bindings:
        mapping = container if type(container) is dict else type.__dict__["__dict__"].__get__(container)
        if mapping.get(key, _MISSING) is not value:
            changed.append(name)
            if type(container) is dict:
                container[key] = value
            else:
                type.__setattr__(container, key, value)
    for f, code, defaults, kwdefaults in functions:
        if f.__code__ is not code or f.__defaults__ is not defaults or f.__kwdefaults__ is not kwdefaults:
            changed.append(f"the code of {f.__module__}.{f.__qualname__}")
            f.__code__, f.__defaults__, f.__kwdefaults__ = code, defaults, kwdefaults
    for cell, held in cells:
        try:
            current = cell.cell_contents
        except ValueError:
            current = _MISSING
        if current is not held:
            changed.append("a variable captured by a function of the course's modules")
            cell.cell_contents = held
    for value, saved, name in contents:
        kind = type(value)
        if kind is dict:
            same = value.keys() == saved.keys() and all(value[k] is saved[k] for k in saved)
        elif kind is list:
            same = len(value) == len(saved) and all(a is b for a, b in zip(value, saved))
        else:
            same = value == saved
        if not same:
            changed.append(name)
            value.clear()
            if kind is list:
                value.extend(saved)
            else:
                value.update(saved)
    return changed


class _CellTimeout(BaseException):
    pass


def _preload():
    """Import what the tests rely on, from the installed packages, before any student code."""
    import importlib
    import pkgutil
    import numpy  # noqa: F401
    import numpy.linalg  # noqa: F401
    import numpy.random  # noqa: F401
    for package_name in ("chibigrad", "autograder.checks"):
        package = importlib.import_module(package_name)
        for info in pkgutil.walk_packages(package.__path__, package_name + "."):
            try:
                importlib.import_module(info.name)
            except Exception:  # an optional module (a missing extra): not the student's doing
                pass


def main(arm=lambda: None):
    request = json.loads(sys.stdin.readline())
    key, cells = request["key"], request["cells"]
    out_fd = int(os.environ.pop("AUTOGRADER_VERIFY_FD"))
    import io
    import signal
    import traceback

    cwd = os.getcwd()
    saved_path = list(sys.path)
    sys.path[:] = [p for p in sys.path if p not in ("", ".", cwd)]
    # chibigrad reads CHIBIGRAD_SIMULATE_CUDA at import, and here it is imported before the setup cell that
    # sets it (09_gpu: setdefault "auto", so "cuda" is the simulated device without a GPU): set it as that cell
    # does, or every device test that passed in the kernel would fail here with "Torch not compiled with CUDA".
    os.environ.setdefault("CHIBIGRAD_SIMULATE_CUDA", "auto")
    _preload()
    from IPython.core.inputtransformer2 import TransformerManager
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config
    shell_config = Config()
    shell_config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=shell_config)
    # Every setup cell installs chibigrad's traceback display (it replaces warnings.showwarning): install it
    # before the snapshot, as the kernel has it, so that the instructor's own setup is not taken for tampering.
    import chibigrad.tracebacks
    chibigrad.tracebacks.install(shell)
    sys.path[:] = [""] + [p for p in saved_path if p not in ("", ".", cwd)]  # as in the kernel
    transform = TransformerManager().transform_cell
    namespace = shell.user_ns

    # captured before any student code: C functions only, or Python ones whose code is re-checked
    write, digest, settrace, setprofile = os.write, hmac.digest, sys.settrace, sys.setprofile
    gettrace, getprofile = sys.gettrace, sys.getprofile
    snapshot = take_snapshot()
    diff, diff_code = diff_and_restore, diff_and_restore.__code__
    key_bytes = bytes.fromhex(key)
    real_stdout, real_stderr = sys.stdout, sys.stderr

    def emit(index, ok, reason, tampered):
        mac = digest(key_bytes, f"{index}|{int(bool(ok))}".encode(), "sha256").hex()
        line = json.dumps({"index": index, "ok": bool(ok), "reason": str(reason)[:2000],
                           "tampered": tampered[:20], "mac": mac})
        write(out_fd, line.encode() + b"\n")

    def on_alarm(signum, frame):
        raise _CellTimeout()

    signal.signal(signal.SIGALRM, on_alarm)
    arm()
    import builtins
    instructor_modules = {}  # name -> module, as the instructor's cells bound them (torch, np, the checks)
    for cell in cells:
        stderr = io.StringIO()
        sys.stdout, sys.stderr = io.StringIO(), stderr
        error = None
        before = {}
        if cell["kind"] != "student":  # the instructor's code runs on the real builtins and its own imports
            for name, module in instructor_modules.items():
                if namespace.get(name, _MISSING) is not module:
                    namespace[name] = module
            namespace["__builtins__"] = builtins
            before = dict(namespace)
        signal.setitimer(signal.ITIMER_REAL, max(float(cell["timeout"]), 0.5))
        try:
            if cell["kind"] == "student":
                shell.run_cell(cell["source"], store_history=False, silent=True)
            else:
                exec(compile(transform(cell["source"]), f"<cell {cell['id']}>", "exec"), namespace)
        except _CellTimeout:
            error = f"it ran past {cell['timeout']:.0f} s"
        except BaseException as err:  # noqa: B902 - a test cell fails on anything, SystemExit included
            lines = traceback.format_exception_only(type(err), err)
            error = "".join(lines).strip()[:1000] or type(err).__name__
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            sys.stdout, sys.stderr = real_stdout, real_stderr
        tampered = []
        if namespace.get("__builtins__") is not builtins:
            namespace["__builtins__"] = builtins
            tampered.append("the notebook namespace's __builtins__")
        if cell["kind"] != "student":
            for name, value in list(namespace.items()):
                if type(value) is type(sys) and before.get(name, _MISSING) is not value:
                    instructor_modules[name] = value
        else:
            for name, module in instructor_modules.items():
                if namespace.get(name, _MISSING) is not module:
                    tampered.append(f"the module the instructor's cells bound to {name!r}")
        if gettrace() is not None or getprofile() is not None:
            settrace(None)
            setprofile(None)
            tampered.append("the trace or profile function (sys.settrace/setprofile)")
        if diff.__code__ is not diff_code:
            diff.__code__ = diff_code
            tampered.append("the verifier itself")
        tampered += diff(snapshot)
        if cell["kind"] != "test":
            emit(cell["index"], True, "", tampered)
            continue
        if error is None and tampered:
            error = "while the tests ran, something replaced " + ", ".join(tampered[:5])
        if error is None and stderr.getvalue():
            error = "it wrote to stderr: " + stderr.getvalue().strip()[:300]
        emit(cell["index"], error is None, error or "", tampered)
    os._exit(0)  # skip interpreter shutdown: student objects' __del__ and atexit hooks do not run
