"""Tracing: run a step once with every tensor's array replaced by a ``TracedArray``.

A ``TracedArray`` is a numpy array (same memory, same values) that tells the active
``Tracer`` about every numpy call made on it, through numpy's own override protocols
(``__array_ufunc__``, ``__array_function__``) and a wrapper around each array method.
The engine's forward, backward and the optimizer's update therefore run unchanged and
are recorded as they happen: this is how the joint graph is captured.

Python that needs a value (``bool(x)``, ``x.tolist()``, a boolean mask, a hook that runs
Python, ``print``, random numbers) cannot be replayed from a graph: the tracer notes a
graph break with its reason and lets the step finish eagerly.
"""
import builtins
import operator
import sys

import numpy as np

from . import _random
from .graph import Graph


class GraphBreak(Exception):
    """Raised by ``fullgraph=True`` compilation where the step cannot be one graph."""


_active = []  # the Tracer recording now, if any


def unwrap(obj):
    """The plain numpy view of ``obj`` (through tuples, lists and dicts); other values as they are."""
    if isinstance(obj, TracedArray):
        return obj.view(np.ndarray)
    if isinstance(obj, SymScalar):
        return obj.value
    if type(obj) in (tuple, list):
        return type(obj)(unwrap(x) for x in obj)
    if type(obj) is dict:
        return {k: unwrap(v) for k, v in obj.items()}
    return obj


class TracedArray(np.ndarray):
    """An array whose numpy calls are recorded while a Tracer is active (plain numpy otherwise)."""

    _node = None  # the graph Node that computed it

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        fn = ufunc if method == "__call__" else getattr(ufunc, method)
        return _record(fn, _ufunc_name(ufunc, method), inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if func in _DATA_DEPENDENT and _active:
            _active[-1].graph_break(f"np.{func.__name__} has a data-dependent output shape")
        return _record(func, _function_name(func), args, kwargs)

    def __bool__(self):
        return _active[-1].python_value(self, "bool", bool) if _active else bool(self.view(np.ndarray))

    def __float__(self):
        return _active[-1].python_value(self, "float", float) if _active else float(self.view(np.ndarray))

    def __int__(self):
        return _active[-1].python_value(self, "int", int) if _active else int(self.view(np.ndarray))

    def __index__(self):
        return _active[-1].python_value(self, "index", operator.index) if _active else \
            operator.index(self.view(np.ndarray))

    def item(self, *args):
        if not _active or args:
            return _plain_method(self, "item", args)
        return _active[-1].item(self)

    def tolist(self):
        if _active:
            _active[-1].graph_break(".tolist() hands the values to Python")
        return self.view(np.ndarray).tolist()

    def __getitem__(self, index):
        if _active and _is_mask(index):
            _active[-1].graph_break("boolean-mask indexing has a data-dependent output shape")
        return _record(_getitem, "getitem", (self, index), {})

    def __setitem__(self, index, value):
        _record(_setitem, "setitem", (self, index, value), {}, mutates=self)

    def __repr__(self):
        if _active:
            _active[-1].graph_break("printing an array hands its values to Python")
        return repr(self.view(np.ndarray))

    __str__ = __repr__

    def __format__(self, spec):
        if _active:
            _active[-1].graph_break("formatting an array hands its values to Python")
        return format(self.view(np.ndarray), spec)


def _getitem(a, index):
    return a[index]


def _setitem(a, index, value):
    a[index] = value


def _is_mask(index):
    items = index if type(index) is tuple else (index,)
    return any(isinstance(i, np.ndarray) and i.dtype == bool for i in items)


# Methods that numpy does not route through the override protocols: each is recorded as
# one node (``mean`` and friends would otherwise split into ufunc calls and a Python scalar).
_METHODS = ("reshape", "transpose", "astype", "copy", "ravel", "flatten", "squeeze", "swapaxes", "repeat", "take",
            "dot", "cumsum", "cumprod", "argmax", "argmin", "argsort", "diagonal", "trace", "conj", "round",
            "sum", "mean", "max", "min", "prod", "any", "all", "var", "std", "clip", "view", "searchsorted",
            "__copy__", "__deepcopy__", "__array__")
_MUTATING = ("fill", "sort", "put", "partition", "resize", "itemset", "setfield")
_VIEW_PROPERTIES = ("T", "mT", "real", "imag")
_DATA_DEPENDENT = {np.nonzero, np.argwhere, np.flatnonzero, np.unique, np.extract, np.compress}


def _plain_method(self, name, args, kwargs=None):
    return getattr(self.view(np.ndarray), name)(*unwrap(args), **unwrap(kwargs or {}))


def _make_method(name, mutating):
    def method(self, *args, **kwargs):
        if name == "view" and args and isinstance(args[0], type) and issubclass(args[0], np.ndarray):
            return np.ndarray.view(self, *args, **kwargs)
        if name == "nonzero" and _active:
            _active[-1].graph_break(".nonzero() has a data-dependent output shape")
        fn = getattr(np.ndarray, name)
        return _record(fn, "." + name, (self,) + args, kwargs, mutates=self if mutating else None)
    method.__name__ = name
    return method


def _make_property(name):
    def get(self):
        return _record(lambda a: getattr(a, name), "." + name, (self,), {})
    return property(get)


for _name in _METHODS + ("nonzero",):
    setattr(TracedArray, _name, _make_method(_name, False))
for _name in _MUTATING:
    setattr(TracedArray, _name, _make_method(_name, True))
for _name in _VIEW_PROPERTIES:
    setattr(TracedArray, _name, _make_property(_name))


class SymScalar:
    """A Python number read from a traced array (``x.item()``): arithmetic on it stays in the
    graph (Adam's bias correction reads its step count this way); using it to steer Python
    (``if``, ``int()``, printing) is a graph break."""

    def __init__(self, value, node):
        self.value, self._node = value, node

    def _binary(self, other, op, swap=False):
        if isinstance(other, np.ndarray):
            return NotImplemented
        args = (other, self) if swap else (self, other)
        return _record(op, _OPERATOR_NAMES[op], args, {})

    def __bool__(self):
        return _active[-1].python_value(self, "bool", bool) if _active else bool(self.value)

    def __float__(self):
        return _active[-1].python_value(self, "float", float) if _active else float(self.value)

    def __int__(self):
        return _active[-1].python_value(self, "int", int) if _active else int(self.value)

    def __index__(self):
        return _active[-1].python_value(self, "index", operator.index) if _active else operator.index(self.value)

    def __format__(self, spec):
        return format(_active[-1].python_value(self, "format", float) if _active else self.value, spec)

    def __repr__(self):
        return repr(_active[-1].python_value(self, "repr", float) if _active else self.value)

    def __neg__(self):
        return _record(operator.neg, "neg", (self,), {})

    def __abs__(self):
        return _record(operator.abs, "abs", (self,), {})


_OPERATOR_NAMES = {operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.truediv: "truediv",
                   operator.pow: "pow", operator.floordiv: "floordiv", operator.mod: "mod",
                   operator.lt: "lt", operator.le: "le", operator.gt: "gt", operator.ge: "ge",
                   operator.neg: "neg", operator.abs: "abs"}
for _op, _name in list(_OPERATOR_NAMES.items())[:7]:
    setattr(SymScalar, f"__{_name}__", lambda self, o, _op=_op: self._binary(o, _op))
    setattr(SymScalar, f"__r{_name}__", lambda self, o, _op=_op: self._binary(o, _op, swap=True))
for _op, _name in list(_OPERATOR_NAMES.items())[7:11]:
    setattr(SymScalar, f"__{_name}__", lambda self, o, _op=_op: _compare(self, o, _op))


def _compare(sym, other, op):
    """A comparison of a value read from a tensor decides Python's next step: a graph break."""
    if _active:
        _active[-1].graph_break("a comparison of a tensor's value steers Python")
    return op(sym.value, unwrap(other))


def _ufunc_name(ufunc, method):
    return f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")


def _function_name(func):
    module = func.__module__.replace("numpy", "np", 1) if func.__module__ else "np"
    return f"{'np' if module.startswith('np._') or module == 'np' else module}.{func.__name__}"


def _record(fn, name, args, kwargs, mutates=None):
    """Call ``fn`` on plain arrays and, while tracing, add the call to the graph."""
    result = fn(*unwrap(args), **unwrap(kwargs))
    if not _active:
        return result
    out = kwargs.get("out")
    if out is not None:  # np.add(a, b, out=a): a is written, and the call returns it
        mutates = out[0] if type(out) is tuple and len(out) == 1 else out
        if type(mutates) is tuple:
            return _active[-1].graph_break(f"{name} with several outputs in out= is not supported") or result
    return _active[-1].add_call(fn, name, args, kwargs, result, mutates)


class Tracer:
    """Records the numpy calls of one run of a step into a Graph.

    ``phase`` follows the step: "forward" until the engine's backward starts, "backward"
    while it runs, "update" inside ``Optimizer.step``. A graph break stops the recording
    (``broken`` gives the reason) and the run goes on eagerly, so its results are right.
    """

    def __init__(self):
        self.graph = Graph()
        self.broken = None
        self.mutated_input = False  # once an input is written, a failed data check cannot fall back
        self.ran_backward = False

    # --- values -------------------------------------------------------------------------
    def placeholder(self, array, name):
        traced = array.view(TracedArray)
        traced._node = self.graph.placeholder(name, array)
        return traced

    def add_call(self, fn, name, args, kwargs, result, mutates):
        if self.broken:
            return _retraced(result, mutates)
        refs = (self._ref(args), self._ref(kwargs))
        if refs[0] is None or refs[1] is None:
            self.graph_break(f"{name} got a value chibigrad.compile cannot record")
            return _retraced(result, mutates)
        if mutates is not None:
            if getattr(mutates, "_node", None) is None:
                self.graph_break(f"{name} writes into an array that is not part of the graph")
                return _retraced(result, mutates)
            self.mutated_input = self.mutated_input or self.graph.is_input_storage(mutates._node)
        node = self.graph.call(fn, name, refs[0], refs[1], _concrete(result, mutates), self._locate(),
                               mutates._node if mutates is not None else None)
        if mutates is not None:
            mutates._node = node
            return mutates if result is not None else None
        return self._wrap(result, node)

    def _wrap(self, result, node):
        if isinstance(result, np.ndarray):
            traced = result.view(TracedArray)
            traced._node = node
            return traced
        if isinstance(result, np.generic):  # numpy's 0-d results are scalars: keep them traceable
            traced = np.asarray(result).view(TracedArray)
            traced._node = node
            return traced
        if isinstance(result, (bool, int, float)) and not isinstance(result, np.generic):
            return SymScalar(result, node)
        if type(result) is tuple:
            return tuple(self._wrap(r, self.graph.call(operator.getitem, "getitem", (node, i), {}, r, node.phase))
                         for i, r in enumerate(result))
        self.graph_break(f"{node.target} returned a {type(result).__name__}, which chibigrad.compile cannot record")
        return result

    def _ref(self, obj):
        """``obj`` with traced values replaced by their Nodes; None if it holds something unrecordable."""
        if isinstance(obj, (TracedArray, SymScalar)):
            return obj._node
        if type(obj) in (tuple, list):
            items = [self._ref(x) for x in obj]
            return None if any(i is None for i, x in zip(items, obj) if x is not None) else type(obj)(items)
        if type(obj) is dict:
            items = {k: self._ref(v) for k, v in obj.items()}
            return None if any(items[k] is None for k, v in obj.items() if v is not None) else items
        if isinstance(obj, np.ndarray):
            if any(np.may_share_memory(obj, p.value) for p in self.graph.placeholders):
                self.graph_break("an input's array left the trace (np.asarray, .numpy()) and came back as a "
                                 "plain array: its values would be frozen into the graph")
                return None
            return self.graph.constant(obj)
        return obj

    def item(self, traced):
        value = traced.view(np.ndarray).item()
        return self.add_call(np.ndarray.item, ".item", (traced,), {}, value, None)

    def python_value(self, traced, how, convert):
        """A traced value turned into a Python ``bool``/``int``/``float``. A ``bool`` read before any
        input was written becomes a data check in the graph (replay falls back to eager if it
        differs); anything else is a graph break."""
        value = convert(traced.value if isinstance(traced, SymScalar) else traced.view(np.ndarray))
        if how == "bool" and not self.mutated_input and not self.broken:
            self.graph.check(traced._node, value, self._locate())
        else:
            self.graph_break(f"{how}() of a traced value: data-dependent Python "
                             f"({_HOW[how]})")
        return value

    def graph_break(self, reason):
        if not self.broken:
            self.broken = f"{reason}, at {_user_frame()}"

    # --- the run ------------------------------------------------------------------------
    def __enter__(self):
        _active.append(self)
        self._print, builtins.print = builtins.print, self._print_break
        self._rng = _random.swap(lambda: self.graph_break("random numbers are drawn inside the step "
                                                          "(dropout, torch.randn)"))
        return self

    def __exit__(self, *exc):
        builtins.print = self._print
        if not _random.restore(self._rng):
            self.graph_break("torch.manual_seed() inside the step: the generator it makes is Python state")
        _active.remove(self)

    def _print_break(self, *args, **kwargs):
        self.graph_break("print() runs Python")
        self._print(*args, **kwargs)

    def _locate(self):
        """The phase of the numpy call being recorded, from the Python stack: inside the engine's
        backward, inside Optimizer.step, or forward; a hook being run is a graph break."""
        frame = sys._getframe(3)
        while frame is not None:
            code = frame.f_code
            if code in _HOOK_CALLERS and _runs_hook(code, frame):
                self.graph_break(f"a hook on {_HOOK_CALLERS[code](frame)} runs Python")
            if code in _PHASES:
                self.ran_backward = self.ran_backward or _PHASES[code] == "backward"
                return _PHASES[code]
            frame = frame.f_back
        return "forward"


_HOW = {"bool": "an if or a while on a tensor", "int": "int() of a tensor", "float": "float() of a tensor",
        "index": "a tensor used as a Python index", "format": "a tensor printed or formatted",
        "repr": "a tensor printed"}


def _concrete(result, mutates):
    return mutates.view(np.ndarray) if mutates is not None else result


def _retraced(result, mutates):
    """What a call returns after a graph break: TracedArrays still, as ``_wrap`` returns them (a
    tensor made before the break and one made after must have the same array type)."""
    if mutates is not None:
        return mutates if result is not None else None
    if isinstance(result, np.generic):
        return np.asarray(result).view(TracedArray)
    return result.view(TracedArray) if isinstance(result, np.ndarray) else result


def _user_frame():
    """Where the user's code stands: the innermost frame outside chibigrad and numpy."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if not (name.startswith("chibigrad") or name.startswith("numpy")):
            filename = frame.f_code.co_filename
            where = "" if "ipykernel" in filename else f"{filename.rsplit('/', 1)[-1]}:"  # a notebook cell
            return f"{where}line {frame.f_lineno} in {frame.f_code.co_name}" if not where else \
                f"{where}{frame.f_lineno} in {frame.f_code.co_name}"
        frame = frame.f_back
    return "an unknown place"


_PHASES = {}
_HOOK_CALLERS = {}


def register_phase(function, phase):
    """Record ops called while ``function`` runs as ``phase`` (the engine's backward, Optimizer.step)."""
    _PHASES[function.__code__] = phase


def register_hook_caller(function, describe):
    """``function`` runs hooks; ``describe(frame)`` names what they hang on (None: no hooks there)."""
    _HOOK_CALLERS[function.__code__] = describe


def _runs_hook(code, frame):
    return _HOOK_CALLERS[code](frame) is not None
