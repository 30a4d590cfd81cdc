"""Sources and guards: which tensors and Python values a step can read, and what must hold to
replay its graph.

A compiled step reads tensors the caller does not pass explicitly: a module's parameters
and their ``.grad``, an optimizer's state. It also reads Python values that the trace
bakes into the graph as constants: ``CFG["scale"]``, ``self.lr``, a global, a closure
cell, a class attribute. ``Sources`` walks from the function's arguments, closure
variables and globals (into Modules, Optimizers, lists, tuples and dicts, objects'
attributes and classes, the functions it meets and their own closures and globals, your
modules) and lists, in a fixed order, every tensor slot with a readable path
(``model.0.weight.grad``) and every Python value (``state``, by path).

The guard of a graph checks all of that again before each replay: each tensor's shape,
dtype, device and ``requires_grad``, the identity of parameters, modules, functions and
arrays, each slot holding a tensor or None, each Python value (its type and value), and
global settings (grad mode, default dtype and device). As in ``torch._dynamo``, the checks
are generated as one Python function (``guard_source``) that reads exactly the fields the
walk read, so a replay costs a few microseconds of guards instead of a walk. The same walk
after the trace tells whether the step changed Python state (``state`` before and after).
"""
import collections
import collections.abc
import functools
import inspect
import operator
import random
import sys
import types
import zlib

import numpy as np

from .. import _device, _dtype
from ..autograd import anomaly_mode, engine, grad_mode, node
from ..nn.modules.module import Module
from ..optim.optimizer import Optimizer
from ..optim.lr_scheduler import LRScheduler
from ..tensor import Tensor
from .audit import is_library
from .tracer import SymScalar, TracedArray

_SCALARS = (bool, int, float, str, type(None))


class Slot:
    """A place holding a tensor (or None): its path, the tensor, and how to put another one there
    (``set`` is None where the step may not change what the slot holds)."""

    __slots__ = ("path", "tensor", "set", "identity")

    def __init__(self, path, tensor, set=None, identity=False):  # noqa: A002 - a setter, as in property()
        self.path, self.tensor, self.set, self.identity = path, tensor, set, identity


class Sources:
    """Every tensor slot and Python value a call can reach, its guard key, and the source
    of a guard function that re-checks them all and returns the slots' tensors."""

    def __init__(self, fn, args, kwargs, replace_traced=False):
        self.slots, self.values, self.hooks, self._seen, self._paths = [], [], [], set(), {}
        self.state, self.unreadable, self.reached, self.names = {}, [], set(), set()
        self.replace_traced, self._seen_classes, self._user_modules = replace_traced, set(), []
        self.globals = {"Tensor": Tensor, "ndarray": np.ndarray, "grad_mode": grad_mode._state}
        self.lines = [f"if grad_mode.enabled is not {grad_mode._state.enabled}: return None",
                      f"if {self._global_state()}: return None",
                      f"if len(args) != {len(args)} or kwargs.keys() != {set(kwargs) or '{}.keys()'}: return None"]
        self._slot_vars, self._count = [], 0
        roots = sorted(_roots(fn, args, kwargs, self), key=lambda r: not isinstance(r[1], Module))  # nicer paths
        for name, value, expr in roots:
            self._walk(value, name, expr, depth=0)
        while self._user_modules:  # read last: the names their attributes are read by are known now
            self._namespace(*self._user_modules.pop(0))

    def key(self):
        """Hashable, and equal for two calls exactly when one graph serves both."""
        slots = tuple((s.path,) + _describe(s.tensor, s.identity) for s in self.slots)
        return (("grad mode", grad_mode._state.enabled),) + slots + tuple(self.values)

    def _global_state(self):
        """A condition that is true when chibigrad's global settings differ from now: the default
        dtype and device, the engine's node ordering, anomaly mode, saved-tensor hooks."""
        self.globals.update(dtypes=_dtype._DEFAULT_FOR_CATEGORY, devices=_device._default_device,
                            ordering=engine._ordering, anomaly=anomaly_mode._state,
                            saved_hooks=node._saved_tensors_hooks)
        now = {"default dtype": _dtype._DEFAULT_FOR_CATEGORY[2], "default device": _device._default_device[0],
               "node ordering": engine._ordering[0], "anomaly mode": anomaly_mode._state.enabled,
               "saved-tensor hooks": bool(node._saved_tensors_hooks)}
        self.values += [(name, _hashable(value)) for name, value in now.items()]
        return (f"dtypes[2] is not {self._const(now['default dtype'])} or devices[0] is not "
                f"{self._const(now['default device'])} or ordering[0] is not {self._const(now['node ordering'])} or "
                f"anomaly.enabled is not {now['anomaly mode']} or {'not ' if now['saved-tensor hooks'] else ''}"
                "saved_hooks")

    def guard_source(self):
        """``def guard(args, kwargs)``: the slots' tensors if every check holds, else None."""
        body = self.lines + [f"return ({''.join(v + ', ' for v in self._slot_vars)})"]
        return "def guard(args, kwargs):\n" + "".join(f"    {line}\n" for line in body)

    # --- the walk: each step notes a slot or value, and the guard lines that re-check it ---
    def _var(self, expr):
        name = f"o{self._count}"
        self._count += 1
        self.lines.append(f"{name} = {expr}")
        return name

    def bind(self, value, prefix):
        """A name in the guard's namespace for ``value`` (a closure, a globals dict)."""
        name = f"{prefix}{id(value)}"
        self.globals[name] = value
        return name

    def _const(self, value):
        name = f"K{len(self.globals)}"
        self.globals[name] = value
        return name

    def _check(self, condition):
        self.lines.append(f"if {condition}: return None")

    def _walk(self, obj, path, expr, depth):
        if isinstance(obj, Tensor):
            self._tensor(obj, path, None, expr, identity=False)
        elif type(obj) in _SCALARS:
            self._value(obj, path, expr)
        elif isinstance(obj, (SymScalar, TracedArray)):
            self.unreadable.append(path)  # a value of the trace left in Python state (after it)
        elif id(obj) in self._seen or depth > _MAX_DEPTH:
            if not isinstance(obj, types.ModuleType):
                self._same(obj, path, expr)
        elif isinstance(obj, Module):
            self._seen.add(id(obj))
            self._module(obj, path, expr, depth)
        elif isinstance(obj, Optimizer):
            self._seen.add(id(obj))
            self._optimizer(obj, path, expr, depth)
        elif type(obj) in _CONTAINERS:
            self._seen.add(id(obj))
            self._container(obj, path, expr, depth)
        elif type(obj) in (set, frozenset):
            self._seen.add(id(obj))
            self._value(frozenset(obj), path, f"frozenset({expr})")
        elif isinstance(obj, types.FunctionType):
            self._seen.add(id(obj))
            self._same(obj, path, expr)
            if not _library(obj):
                self._reach(obj.__code__)
                for name, value, sub_expr in _function_roots(obj, self):
                    self._walk(value, f"{path}.{name}" if depth else name, sub_expr, depth + 1)
        elif isinstance(obj, types.MethodType):
            var = self._var(expr)
            self._check(f"{var}.__func__ is not {self._const(obj.__func__)}")
            self._walk(obj.__func__, path, f"{var}.__func__", depth + 1)
            self._walk(obj.__self__, path + ".__self__", f"{var}.__self__", depth + 1)
        elif isinstance(obj, types.ModuleType):
            self._seen.add(id(obj))
            if not _library_module(obj.__name__):
                self._user_modules.append((obj, path, expr, depth))
        elif isinstance(obj, type):
            self._seen.add(id(obj))
            self._same(obj, path, expr)
            self._class(obj, path, depth)
        elif isinstance(obj, _POSITIONED):  # generators, iterators, random generators: where they are now
            self._seen.add(id(obj))
            self._same(obj, path, expr)
            self.state[path + " position"] = _position(obj)
        elif isinstance(obj, np.ndarray) or hasattr(type(obj), "__cuda_array_interface__"):  # a constant of the graph
            self._seen.add(id(obj))
            self._same(obj, path, expr)
        elif hasattr(obj, "__dict__") and not _library(type(obj)) or isinstance(obj, LRScheduler):
            self._seen.add(id(obj))
            var = self._var(expr)
            self._check(f"type({var}) is not {self._const(type(obj))}")
            self.state[path] = ("object", id(obj))  # a fresh argument is fine; another object put there is not
            self._class(type(obj), path + ".__class__", depth)
            self._attributes(obj, path, var, vars(obj), depth)
        elif not _library(type(obj)):
            self._same(obj, path, expr)  # no __dict__ to walk: the same object

    def _same(self, obj, path, expr):
        """``obj`` itself must be there (a function, a class, an array the graph holds)."""
        self.state[path] = ("object", id(obj))
        self._check(f"{expr} is not {self._const(obj)}")

    def _value(self, value, path, expr):
        """A Python value the step may have baked in: the same type and an equal value (a zero of
        the same sign: ``t * -0.0`` and ``t * 0.0`` differ bitwise)."""
        self.values.append((path, value))
        self.state[path] = (type(value), value)
        var = self._var(expr)
        if value is None or type(value) is bool:
            self._check(f"{var} is not {value}")
            return
        condition = f"type({var}) is not {type(value).__name__} or {var} != {self._const(value)}"
        if type(value) is float and value == 0:
            condition += f" or str({var}) != {str(value)!r}"
        self._check(condition)

    def _container(self, obj, path, expr, depth):
        var = self._var(expr)
        mapping = isinstance(obj, dict)
        self.state[path] = (type(obj), tuple(obj) if mapping else len(obj))
        self._check(f"type({var}) is not {self._const(type(obj))} or len({var}) != {len(obj)}")
        values = obj.values() if mapping else obj
        if len(obj) > _MANY and all(type(v) in _SCALARS for v in values):  # data, not settings: one comparison
            self.state[path] = (type(obj), repr(obj))
            self.values.append((path, f"{len(obj)} items, crc {zlib.crc32(repr(obj).encode()):08x}"))
            self._check(f"{var} != {self._const(dict(obj) if mapping else type(obj)(obj))}")
            return
        if mapping:
            self._check(f"{var}.keys() != {self._const(set(obj))}")
        items = obj.items() if mapping else enumerate(obj)
        for k, item in list(items):
            if type(k) in _SCALARS:  # other keys are not followed
                if self.replace_traced and isinstance(item, SymScalar) and type(obj) is not tuple:
                    obj[k] = item = item.value  # a number read with .item() while tracing: the number
                self._walk(item, f"{path}[{k!r}]", f"{var}.get({k!r})" if mapping else f"{var}[{k}]",
                           depth + 1)

    def _attributes(self, obj, path, var, attributes, depth, skip=()):
        """An object's own attributes (its ``__dict__``): the same names, each walked."""
        self.state[path + ".__dict__"] = tuple(attributes)
        self._check(f"len({var}.__dict__) != {len(attributes)}")
        for name, value in list(attributes.items()):
            if name not in skip:
                if self.replace_traced and isinstance(value, SymScalar):
                    setattr(obj, name, value.value)
                    value = value.value
                self._walk(value, f"{path}.{name}", f"{var}.__dict__.get({name!r})", depth + 1)

    def _class(self, cls, path, depth):
        """What a user-defined class holds: methods (their code runs) and class attributes."""
        for klass in cls.__mro__:
            if _library(klass) or id(klass) in self._seen_classes:
                continue
            self._seen_classes.add(id(klass))
            name = self.bind(klass, "T")
            for attr, member in vars(klass).items():
                if isinstance(member, (staticmethod, classmethod)):
                    member = member.__func__
                if isinstance(member, property):
                    member = member.fget
                if attr.startswith("__") and not isinstance(member, types.FunctionType):
                    continue
                self._walk(member, f"{klass.__name__}.{attr}", f"{name}.__dict__.get({attr!r})", depth + 1)

    def _namespace(self, module, path, expr, depth):
        """A module of yours: the names of it that the reached code reads."""
        var = self._var(expr)
        for name in self.names:
            if name in vars(module) and not name.startswith("__"):
                self._walk(vars(module)[name], f"{path}.{name}", f"{var}.__dict__.get({name!r})", depth + 1)

    def _reach(self, code):
        """``code`` and the functions defined in it (lambdas, comprehensions) may run while tracing."""
        self.reached.add(code)
        self.names.update(_names(code))
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                self._reach(const)

    def _tensor(self, t, path, setter, expr, identity):
        """A tensor slot, and its ``.grad`` slot if it is a leaf that requires grad (fields
        read directly: this walk runs on every compile and its guard on every call)."""
        if id(t) in self._seen:
            if identity:
                self._check(f"{expr} is not {self._const(t)}")
            return
        self._seen.add(id(t))
        self._paths[id(t)] = path
        self.slots.append(Slot(path, t, setter, identity))
        var = self._var(expr)
        self._slot_vars.append(var)
        a = t._array
        same = f"{var} is not {self._const(t)}" if identity else f"not isinstance({var}, Tensor)"
        # a parameter that requires grad is a leaf for good (in-place ops on it raise): read the field
        requires_grad = f"{var}._requires_grad is not True" if identity and t._requires_grad and \
            t._grad_fn is None else f"{var}.requires_grad is not {t.requires_grad}"
        hooks = _changed(bool(t._backward_hooks or t._post_accumulate_hooks), var, _TENSOR_HOOKS)
        self._check(f"{same} or type(a := {var}._array) is not {self._const(type(a))} or a.shape != "
                    f"{a.shape} or a.dtype != {self._const(a.dtype)} or {requires_grad} or {hooks}")
        if t._backward_hooks or t._post_accumulate_hooks:
            self.hooks.append(f"a hook on {path} runs Python")
        if t._requires_grad and t._grad_fn is None:
            grad = t._grad
            # the graph's gradient has the traced shape and dtype: no need for the .grad setter's checks;
            # the owner is the slot before (an argument may be another tensor at the next call)
            owner = len(self.slots) - 1
            self.slots.append(Slot(path + ".grad", grad, lambda slots, g, o=owner: setattr(slots[o], "_grad", g)))
            gvar = self._var(f"{var}._grad")
            self._slot_vars.append(gvar)
            if grad is None:
                self._check(f"{gvar} is not None")
            else:
                self._seen.add(id(grad))
                ga = grad._array
                self._check(f"{gvar} is None or type(a := {gvar}._array) is not {self._const(type(ga))} or "
                            f"a.shape != {ga.shape} or a.dtype != {self._const(ga.dtype)}")

    def _module(self, module, path, expr, depth):
        """The module's ``training`` flag and hooks, then its parameters, buffers and
        submodules, in the order of ``named_modules``, then its other attributes and its class."""
        var = self._var(expr)
        self.values.append((path + ".training", module.training))
        self.state[path + ".training"] = module.training
        if module._forward_pre_hooks or module._forward_hooks or module._backward_hooks or \
                module._backward_pre_hooks:
            self.hooks.append(f"a hook on module {path} runs Python")
        sizes = " or ".join(f"len({var}.{f}) != {len(getattr(module, f))}" for f in ("_parameters", "_buffers",
                                                                                   "_modules"))
        hooks = _changed(any(getattr(module, f) for f in _MODULE_HOOKS), var, _MODULE_HOOKS)
        self._check(f"{var} is not {self._const(module)} or {var}.training is not {module.training} or "
                    f"{hooks} or {sizes}")
        for field in ("_parameters", "_buffers", "_modules"):
            for name, member in getattr(module, field).items():
                sub = f"{path}.{name}"
                if member is None:
                    self._check(f"{var}.{field}[{name!r}] is not None")
                elif field == "_modules":
                    if id(member) in self._seen:
                        self._check(f"{var}.{field}[{name!r}] is not {self._const(member)}")
                    else:
                        self._seen.add(id(member))
                        self._module(member, sub, f"{var}.{field}[{name!r}]", depth + 1)
                else:
                    self._tensor(member, sub, None, f"{var}.{field}[{name!r}]", identity=True)
        self._class(type(module), path + ".__class__", depth)
        self._attributes(module, path, var, vars(module), depth, skip=_MODULE_FIELDS)

    def _optimizer(self, optimizer, path, expr, depth):
        var = self._var(expr)
        self._check(f"{var} is not {self._const(optimizer)} or len({var}.param_groups) != "
                    f"{len(optimizer.param_groups)}")
        self._class(type(optimizer), path + ".__class__", depth)
        # defaults: read by add_param_group only (a new group is a new tensor slot, which the plan refuses)
        self._attributes(optimizer, path, var, vars(optimizer), depth, skip=("param_groups", "state", "defaults"))
        for g, group in enumerate(optimizer.param_groups):
            gvar = self._var(f"{var}.param_groups[{g}]")
            self._check(f"len({gvar}) != {len(group)} or len({gvar}['params']) != {len(group['params'])}")
            options = [k for k in group if k != "params"]
            for k in options:
                self.values.append((f"{path}.param_groups[{g}].{k}", _hashable(group[k])))
                self.state[f"{path}.param_groups[{g}].{k}"] = (type(group[k]), _hashable(group[k]))
            if options:  # one comparison of all hyper-parameters: a changed lr recompiles
                self._check(f"({''.join(f'{gvar}[{k!r}], ' for k in options)}) != "
                            f"{self._const(tuple(group[k] for k in options))}")
            for i, p in enumerate(group["params"]):
                self._tensor(p, f"{path}.param_groups[{g}].params[{i}]", None, f"{gvar}['params'][{i}]", True)
        self.values.append((f"{path}.state size", len(optimizer.state)))
        self._check(f"len({var}.state) != {len(optimizer.state)}")
        if not optimizer.state:  # nothing to look up (a lookup hashes a tensor: Python code)
            return
        for group in optimizer.param_groups:
            for p in group["params"]:
                self._state(optimizer, p, f"{path}.state[{self._paths[id(p)]}]", var)

    def _state(self, optimizer, p, path, var):
        state = optimizer.state.get(p)
        self.values.append((path, tuple(state) if state else None))
        svar = self._var(f"{var}.state.get({self._const(p)})")
        if not state:
            self._check(f"{svar}")
            return
        self._check(f"{svar} is not {self._const(state)} or len({svar}) != {len(state)}")
        for k, v in state.items():
            self._check(f"{k!r} not in {svar}")
            if isinstance(v, Tensor):
                self._tensor(v, f"{path}[{k!r}]", lambda slots, t, s=state, k=k: s.__setitem__(k, t),
                             f"{svar}[{k!r}]", identity=False)
            else:
                self.values.append((f"{path}[{k!r}]", _hashable(v)))
                self.state[f"{path}[{k!r}]"] = (type(v), _hashable(v))
                self._check(f"type({svar}[{k!r}]) is not {self._const(type(v))} or {svar}[{k!r}] != {self._const(v)}")


_MAX_DEPTH = 8
_CONTAINERS = (list, tuple, dict, collections.OrderedDict, collections.defaultdict)
_MANY = 32  # a container of more Python numbers or strings is compared in one go (1 == 1.0 == True there)
_MODULE_FIELDS = ("training", "_parameters", "_buffers", "_modules", "_non_persistent_buffers_set",
                  "_forward_pre_hooks", "_forward_hooks", "_backward_hooks", "_backward_pre_hooks")
_MODULE_HOOKS = ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks", "_backward_pre_hooks")
_TENSOR_HOOKS = ("_backward_hooks", "_post_accumulate_hooks")


_POSITIONED = (types.GeneratorType, collections.abc.Iterator, random.Random, np.random.Generator,
               np.random.RandomState)


def _position(obj):
    """What changes when a generator, an iterator or a random generator is used."""
    if isinstance(obj, types.GeneratorType):
        return inspect.getgeneratorstate(obj), obj.gi_frame.f_lasti if obj.gi_frame else None
    if isinstance(obj, random.Random):
        return hash(obj.getstate())
    if isinstance(obj, (np.random.Generator, np.random.RandomState)):
        return repr(obj.bit_generator.state if isinstance(obj, np.random.Generator) else obj.get_state(legacy=False))
    return operator.length_hint(obj, -1)


def _changed(had, var, fields):
    """A condition that is true when ``var``'s hook fields no longer match ``had`` (hooks or none):
    a truth test of the fields, cheaper than comparing ``bool(...)`` with a constant."""
    test = " or ".join(f"{var}.{f}" for f in fields)
    return f"({test})" if not had else f"not ({test})"


def compile_guard(sources, source=None):
    """The guard function of ``sources`` (see ``Sources.guard_source``)."""
    namespace = dict(sources.globals)
    exec(compile(source or sources.guard_source(), "<chibigrad.compile guard>", "exec"), namespace)  # noqa: S102
    return namespace["guard"]


def _describe(t, identity):
    """A tensor's guard: its identity where the step may not replace it (parameters,
    arguments), then shape, dtype, device (the array type) and requires_grad."""
    if t is None:
        return (None,)
    a = t._array
    return id(t) if identity else None, a.shape, a.dtype.str, type(a), t.requires_grad


def _hashable(v):
    try:
        hash(v)
        return v
    except TypeError:
        return repr(v)


def _library(obj):
    """A function or class of chibigrad, numpy, the standard library or an installed package."""
    return _library_module(getattr(obj, "__module__", None) or "builtins")


@functools.lru_cache(maxsize=1024)
def _library_module(name):
    if name in sys.builtin_module_names:
        return True
    filename = getattr(sys.modules.get(name), "__file__", None)  # None: a notebook, code given to exec
    return filename is not None and is_library(filename)


def _roots(fn, args, kwargs, sources):
    """(name, value, expression) for the function's arguments, then what its code reads from
    closures and globals."""
    target = getattr(fn, "forward", None) if isinstance(fn, Module) else fn
    code = getattr(target, "__code__", None)
    names = list(code.co_varnames[:code.co_argcount]) if code else []
    roots = []
    if isinstance(target, types.MethodType):
        roots.append(("self", target.__self__, sources.bind(target.__self__, "SELF")))
        names = names[1:]
    for i, a in enumerate(args):
        roots.append(((names[i] if i < len(names) else f"args[{i}]"), a, f"args[{i}]"))
    roots += [(k, v, f"kwargs[{k!r}]") for k, v in kwargs.items()]
    if isinstance(target, types.MethodType):
        target = target.__func__
    if isinstance(target, types.FunctionType):
        sources._reach(target.__code__)
        roots += list(_function_roots(target, sources))
    elif not isinstance(fn, Module):  # an object with __call__: what it holds, and its class
        roots.append(("self", fn, sources.bind(fn, "SELF")))
    return roots


def _function_roots(fn, sources):
    """Closure variables and globals ``fn`` reads, with expressions that read them again."""
    code = fn.__code__
    for i, (name, cell) in enumerate(zip(code.co_freevars, fn.__closure__ or ())):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        yield name, value, f"{sources.bind(fn.__closure__, 'C')}[{i}].cell_contents"
    for name in _names(code):
        if name in fn.__globals__:
            yield name, fn.__globals__[name], f"{sources.bind(fn.__globals__, 'G')}.get({name!r})"


@functools.lru_cache(maxsize=256)
def _names(code):
    """Global names a code object reads, nested functions and comprehensions included."""
    found = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += [n for n in _names(const) if n not in found]
    return tuple(found)
