"""Sources and guards: which tensors a step reads, and what must hold to replay its graph.

A compiled step reads tensors the caller does not pass explicitly: a module's parameters
and their ``.grad``, an optimizer's state. ``Sources`` walks from the function's
arguments, closure variables and globals (into Modules, Optimizers, lists and dicts) and
lists, in a fixed order, every tensor slot with a readable path (``model.0.weight.grad``)
and every Python value the step may have baked in (a learning rate, ``module.training``).

The guard of a graph checks all of that again before each replay: each tensor's shape,
dtype, device and ``requires_grad``, the identity of parameters, modules and optimizers,
each slot holding a tensor or None, each Python value, and the grad mode. As in
``torch._dynamo``, the checks are generated as one Python function (``guard_source``)
that reads exactly the fields the walk read, so a replay costs a few microseconds of
guards instead of a walk.
"""
import functools
import types

import numpy as np

from ..autograd import grad_mode
from ..nn.modules.module import Module
from ..optim.optimizer import Optimizer
from ..tensor import Tensor

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

    def __init__(self, fn, args, kwargs):
        self.slots, self.values, self.hooks, self._seen, self._paths = [], [], [], set(), {}
        self.globals = {"Tensor": Tensor, "ndarray": np.ndarray, "grad_mode": grad_mode._state}
        self.lines = [f"if grad_mode.enabled is not {grad_mode._state.enabled}: return None",
                      f"if len(args) != {len(args)} or kwargs.keys() != {set(kwargs) or '{}.keys()'}: return None"]
        self._slot_vars, self._count = [], 0
        roots = sorted(_roots(fn, args, kwargs, self), key=lambda r: not isinstance(r[1], Module))  # nicer paths
        for name, value, expr in roots:
            self._walk(value, name, expr, depth=0)

    def key(self):
        """Hashable, and equal for two calls exactly when one graph serves both."""
        slots = tuple((s.path,) + _describe(s.tensor, s.identity) for s in self.slots)
        return (("grad mode", grad_mode._state.enabled),) + slots + tuple(self.values)

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
        elif id(obj) in self._seen or depth > 6:
            if isinstance(obj, (Module, Optimizer)) or type(obj) in (list, tuple, dict):
                self._check(f"{expr} is not {self._const(obj)}")
        elif isinstance(obj, Module):
            self._seen.add(id(obj))
            self._module(obj, path, expr)
        elif isinstance(obj, Optimizer):
            self._seen.add(id(obj))
            self._optimizer(obj, path, expr)
        elif type(obj) in (list, tuple, dict):
            self._seen.add(id(obj))
            var = self._var(expr)
            self._check(f"type({var}) is not {type(obj).__name__} or len({var}) != {len(obj)}")
            items = obj.items() if type(obj) is dict else enumerate(obj)
            for k, item in items:
                if type(k) in (str, int):  # other keys are not followed
                    self._walk(item, f"{path}[{k!r}]", f"{var}.get({k!r})" if type(obj) is dict else f"{var}[{k}]",
                               depth + 1)
        elif isinstance(obj, types.FunctionType) and not _library(obj):
            self._seen.add(id(obj))
            self._check(f"{expr} is not {self._const(obj)}")
            for name, value, sub_expr in _function_roots(obj, self):
                self._walk(value, name, sub_expr, depth + 1)
        elif type(obj) in _SCALARS and depth == 0:
            self.values.append((path, obj))
            var = self._var(expr)
            self._check(f"type({var}) is not {type(obj).__name__} or {var} != {self._const(obj)}")

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

    def _module(self, module, path, expr):
        """The module's ``training`` flag and hooks, then its parameters, buffers and
        submodules, in the order of ``named_modules``."""
        var = self._var(expr)
        self.values.append((path + ".training", module.training))
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
                        self._module(member, sub, f"{var}.{field}[{name!r}]")
                else:
                    self._tensor(member, sub, None, f"{var}.{field}[{name!r}]", identity=True)

    def _optimizer(self, optimizer, path, expr):
        var = self._var(expr)
        self._check(f"{var} is not {self._const(optimizer)} or len({var}.param_groups) != "
                    f"{len(optimizer.param_groups)}")
        for g, group in enumerate(optimizer.param_groups):
            gvar = self._var(f"{var}.param_groups[{g}]")
            self._check(f"len({gvar}) != {len(group)} or len({gvar}['params']) != {len(group['params'])}")
            options = [k for k in group if k != "params"]
            for k in options:
                self.values.append((f"{path}.param_groups[{g}].{k}", _hashable(group[k])))
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
                self._check(f"{svar}[{k!r}] != {self._const(v)}")


_MODULE_HOOKS = ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks", "_backward_pre_hooks")
_TENSOR_HOOKS = ("_backward_hooks", "_post_accumulate_hooks")


def _changed(had, var, fields):
    """A condition that is true when ``var``'s hook fields no longer match ``had`` (hooks or none):
    a truth test of the fields, cheaper than comparing ``bool(...)`` with a constant."""
    test = " or ".join(f"{var}.{f}" for f in fields)
    return f"({test})" if not had else f"not ({test})"


def compile_guard(sources):
    """The guard function of ``sources`` (see ``Sources.guard_source``)."""
    namespace = dict(sources.globals)
    exec(compile(sources.guard_source(), "<chibigrad.compile guard>", "exec"), namespace)  # noqa: S102
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


def _library(fn):
    module = getattr(fn, "__module__", "") or ""
    return module.split(".")[0] in ("chibigrad", "numpy", "builtins")


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
        roots += list(_function_roots(target, sources))
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
            value = fn.__globals__[name]
            if not isinstance(value, types.ModuleType) and not isinstance(value, type):
                yield name, value, f"{sources.bind(fn.__globals__, 'G')}.get({name!r})"


@functools.lru_cache(maxsize=256)
def _names(code):
    """Global names a code object reads, nested functions and comprehensions included."""
    found = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += [n for n in _names(const) if n not in found]
    return tuple(found)
