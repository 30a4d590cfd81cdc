"""The captured program: a list of Nodes in the order they ran, and its Python source.

Like ``torch.fx``, a Node is one operation: ``op`` is "placeholder" (an input array),
"constant" (an array the step made without reading any input), "call" (a numpy call),
"check" (a value Python branched on, checked again at replay) or "output". A call that
writes into an array (``out=``, ``a[i] = v``) names that array in ``mutates``: the
program is straight-line code that runs in order, in-place updates included.
"""
import builtins
import math
import operator

import numpy as np


FREE_MIN_BYTES = 65536  # smaller values are not worth a line of code


class Node:
    """One operation of the graph. ``value`` is what it computed while tracing (shapes,
    dtypes and memory come from it); ``phase`` is forward, backward or update."""

    def __init__(self, op, name, target=None, target_name="", args=(), kwargs=None, value=None, phase="",
                 mutates=None):
        self.op, self.name, self.target, self.target_name = op, name, target, target_name
        self.args, self.kwargs = args, kwargs or {}
        self.value, self.phase, self.mutates = value, phase, mutates
        self.storage = _storage(value)

    @property
    def shape(self):
        return getattr(self.value, "shape", ())

    @property
    def dtype(self):
        return getattr(self.value, "dtype", type(self.value))

    @property
    def inputs(self):
        """The Nodes this one reads, in order (a mutated array counts as read)."""
        found = []
        _collect((self.args, self.kwargs), found)
        return found

    def __repr__(self):
        return f"Node({self.op}, {self.name}, {self.target_name}{', writes ' + self.mutates.name if self.mutates else ''})"


def _collect(obj, found):
    if isinstance(obj, Node):
        found.append(obj)
    elif type(obj) in (tuple, list):
        for x in obj:
            _collect(x, found)
    elif type(obj) is dict:
        for x in obj.values():
            _collect(x, found)


def _storage(value):
    """The id of the array that owns ``value``'s memory (views share it); None for non-arrays."""
    if not isinstance(value, np.ndarray):
        return None
    while isinstance(value.base, np.ndarray):
        value = value.base
    return id(value)


class Graph:
    """Nodes in program order, with ``code`` (the generated source) once ``output`` is set."""

    def __init__(self):
        self.nodes = []
        self._names = {}

    def _name(self, base):
        base = "_".join("".join(c if c.isalnum() else " " for c in base).split()) or "v"
        base = base if not base[0].isdigit() else "v_" + base
        n = self._names.get(base, 0)
        self._names[base] = n + 1
        if base in _BUILTIN_NAMES:  # sum_1, max_1: never shadow a Python builtin
            return f"{base}_{n + 1}"
        return base if n == 0 else f"{base}_{n}"

    def _add(self, node):
        self.nodes.append(node)
        return node

    def placeholder(self, name, array):
        return self._add(Node("placeholder", self._name(name), value=array))

    def constant(self, array):
        return self._add(Node("constant", self._name("const"), value=array))

    def call(self, fn, target_name, args, kwargs, value, phase, mutates=None):
        base = target_name.replace("np.", "").replace(".", "_").strip("_")
        name = mutates.name if mutates is not None else self._name(base)
        return self._add(Node("call", name, fn, target_name, args, kwargs, value, phase, mutates))

    def check(self, node, expected, phase):
        return self._add(Node("check", self._name("check"), args=(node,), value=expected, phase=phase))

    def output(self, nodes):
        return self._add(Node("output", "output", args=tuple(nodes)))

    def reuse_names(self):
        """Give a value the name of a dead value of the same kind (``add_3 = multiply_1 + b`` can
        become ``add = multiply + b`` once the old ``add`` is dead), as ``y = y * w + b`` does by
        hand: rebinding the name frees the old array at once, so a long program keeps few
        arrays alive and hot in the cache."""
        last, root = {}, {}
        for i, node in enumerate(self.nodes):
            if node.op == "call":
                root[id(node)] = root.get(id(node.mutates), id(node.mutates)) if node.mutates is not None else id(node)
            for a in node.inputs:
                if id(a) in root:
                    last[root[id(a)]] = len(self.nodes) if node.op == "output" else i
        free, renamed = {}, {}
        for i, node in enumerate(self.nodes):
            for a in node.inputs:
                r = root.get(id(a))
                if r in renamed and last.get(r) == i and r not in free.get("released", ()):
                    free.setdefault("released", set()).add(r)
                    free.setdefault(renamed[r][1], []).append(renamed[r][0])
            if node.op != "call":
                continue
            if node.mutates is not None:  # writes into an array: keeps that array's name
                r = root[id(node)]
                node.name = renamed[r][0] if r in renamed else node.mutates.name
                continue
            base = node.name.rstrip("0123456789").rstrip("_") or node.name
            pool = free.get(base)
            if pool and id(node) in last:
                node.name = pool.pop()
            renamed[id(node)] = (node.name, base)
            if id(node) not in last:  # never read: free its name right away
                free.setdefault("released", set()).add(id(node))
                free.setdefault(base, []).append(node.name)

    def _frees(self):
        """Where to ``del`` a large value made by the step: after its last read, unless its name
        is bound again later (which frees it too)."""
        external = {n.storage for n in self.nodes if n.op in ("placeholder", "constant", "buffer")}
        open_, frees = {}, {}
        for i, node in enumerate(self.nodes):
            for a in node.inputs:
                if a.name in open_ and node.op != "output":
                    open_[a.name][1] = i
                elif a.name in open_:
                    del open_[a.name]
            if node.op == "call" and node.mutates is None:
                large = node.storage not in external and getattr(node.value, "nbytes", 0) >= FREE_MIN_BYTES \
                    and "out" not in node.kwargs
                open_.pop(node.name, None)
                if large:
                    open_[node.name] = [i, i]
        for name, (_, i) in open_.items():
            frees.setdefault(i, []).append(name)
        return frees

    @property
    def placeholders(self):
        return [n for n in self.nodes if n.op == "placeholder"]

    def is_input_storage(self, node):
        return node.storage in {p.storage for p in self.placeholders}

    def mutated_storages(self):
        return {n.mutates.storage for n in self.nodes if n.mutates is not None}

    def python_code(self, fn_name="compiled_step"):
        """The graph as Python source and the globals it needs (``np`` and its constants)."""
        globals_ = {"np": np, "operator": operator, "DataCheckFailed": DataCheckFailed}
        mutated = self.mutated_storages()
        frees = self._frees()
        lines, phase = [], None
        for i, node in enumerate(self.nodes):
            if node.op == "buffer":
                globals_[node.name] = node.value
                continue
            if node.op == "constant":
                if node.storage in mutated:  # written by the step: each call starts from the value traced
                    globals_["traced_" + node.name] = node.value
                    lines.append(f"    {node.name} = traced_{node.name}.copy()")
                else:
                    globals_[node.name] = node.value
                continue
            if node.op in ("call", "check") and node.phase != phase:
                phase = node.phase
                lines.append(f"    # {'-' * 20} {phase} {'-' * 20}")
            if node.op == "call":
                lines.append("    " + _statement(node, globals_))
            elif node.op == "check":
                (value,), expected = node.args, node.value
                lines.append(f"    if {'not ' if expected else ''}{value.name}:  # Python branched on this value")
                lines.append(f"        raise DataCheckFailed({value.name!r})")
            elif node.op == "output":
                lines.append(f"    return ({''.join(a.name + ', ' for a in node.args)})")
            if i in frees:
                lines.append(f"    del {', '.join(frees[i])}")
        args = ", ".join(p.name for p in self.placeholders)
        return f"def {fn_name}({args}):\n" + "\n".join(lines) + "\n", globals_


_BUILTIN_NAMES = set(dir(builtins)) | {"np", "operator", "output"}


class DataCheckFailed(Exception):
    """Raised by generated code when a value Python branched on differs from the trace."""


_UFUNC_INFIX = {np.add: "+", np.subtract: "-", np.multiply: "*", np.true_divide: "/", np.matmul: "@",
                np.power: "**", np.greater: ">", np.less: "<", np.greater_equal: ">=", np.less_equal: "<=",
                np.equal: "==", np.not_equal: "!="}
_INFIX = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "pow": "**", "floordiv": "//", "mod": "%"}


def _statement(node, globals_):
    """One line of generated code for a call node."""
    fmt = _Formatter(globals_)
    args = [fmt(a) for a in node.args]
    kwargs = [f"{k}={fmt(v[0] if k == 'out' and type(v) is tuple and len(v) == 1 else v)}"
              for k, v in node.kwargs.items()]
    target = node.target_name
    if target == "setitem":
        return f"{args[0]}[{_index(node.args[1], fmt)}] = {args[2]}"
    if target == "getitem":
        expr = f"{args[0]}[{_index(node.args[1], fmt)}]"
    elif target in _INFIX:
        expr = f"({args[0]} {_INFIX[target]} {args[1]})"
    elif node.target in _UFUNC_INFIX and not kwargs and len(args) == 2 and any(
            isinstance(a, Node) and isinstance(a.value, (np.ndarray, np.generic)) for a in node.args):
        expr = f"{args[0]} {_UFUNC_INFIX[node.target]} {args[1]}"  # ndarray's operators call these ufuncs
    elif target in ("neg", "abs"):
        expr = f"-{args[0]}" if target == "neg" else f"abs({args[0]})"
    elif target.startswith(".") and node.target is not None and not callable(getattr(np.ndarray, target[1:], None)):
        expr = f"{args[0]}{target}"  # a property: .T
    elif target.startswith("."):
        expr = f"{args[0]}{target}({', '.join(args[1:] + kwargs)})"
    else:
        expr = f"{_callee(node, globals_)}({', '.join(args + kwargs)})"
    if node.mutates is not None:
        return expr  # np.add(a, b, out=a), a[i] = v: a already names the result
    return f"{node.name} = {expr}"


def _index(index, fmt):
    if type(index) is tuple and index:
        return ", ".join(fmt(i) for i in index) + ("," if len(index) == 1 else "")
    return fmt(index)


def _callee(node, globals_):
    """``np.add`` when that name resolves to the function called, else a global bound to it."""
    try:
        if eval(node.target_name, {"np": np}) is node.target:  # noqa: S307 - our own dotted names
            return node.target_name
    except (AttributeError, NameError, SyntaxError):
        pass
    name = "_" + node.target_name.replace(".", "_")
    globals_[name] = node.target
    return name


class _Formatter:
    """Source text for an argument: a Node's name, a literal, or a global holding the value."""

    def __init__(self, globals_):
        self.globals = globals_

    def __call__(self, value):
        if isinstance(value, Node):
            return value.name
        if value is None or value is Ellipsis or type(value) in (bool, int, str):
            return repr(value)
        if type(value) is float:
            return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
        if type(value) is slice:
            return f"slice({self(value.start)}, {self(value.stop)}, {self(value.step)})"
        if type(value) is tuple:
            return "(" + ", ".join(self(v) for v in value) + ")" if len(value) != 1 else f"({self(value[0])},)"
        if type(value) is list:
            return "[" + ", ".join(self(v) for v in value) + "]"
        if type(value) is dict:
            return "{" + ", ".join(f"{k!r}: {self(v)}" for k, v in value.items()) + "}"
        if isinstance(value, np.dtype):
            return f"np.dtype({value.str!r})" if value.fields is None else self._global(value)
        if isinstance(value, type) and getattr(np, value.__name__, None) is value:
            return f"np.{value.__name__}"
        if isinstance(value, np.generic) and value.dtype.kind in "biuf" and np.isfinite(value):
            return f"np.{type(value).__name__}({value.item()!r})"
        return self._global(value)

    def _global(self, value):
        name = f"_k{len(self.globals)}"
        self.globals[name] = value
        return name
