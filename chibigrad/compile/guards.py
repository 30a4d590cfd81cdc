"""Sources and guards: which tensors a step reads, and what must hold to replay its graph.

A compiled step reads tensors the caller does not pass explicitly: a module's parameters
and their ``.grad``, an optimizer's state. ``find_sources`` walks from the function's
arguments, closure variables and globals (into Modules, Optimizers, lists and dicts) and
returns, in a fixed order, every tensor slot with a readable path (``model.0.weight.grad``)
and every Python value the step may have baked in (a learning rate, ``module.training``).

The guard of a compiled graph is that list reduced to what the graph depends on: each
tensor's identity, shape, dtype, device and ``requires_grad``, each slot holding a tensor
or None, each Python value, and the grad mode. A call whose guard differs recompiles.
"""
import types

from ..autograd.grad_mode import is_grad_enabled
from ..nn.modules.module import Module
from ..optim.optimizer import Optimizer
from ..tensor import Tensor

_SCALARS = (bool, int, float, str, type(None))


class Slot:
    """A place holding a tensor (or None): its path, the tensor, and how to put another one there
    (``set`` is None where the step may not change what the slot holds)."""

    __slots__ = ("path", "tensor", "set")

    def __init__(self, path, tensor, set=None):  # noqa: A002 - a setter, named as in property()
        self.path, self.tensor, self.set = path, tensor, set


class Sources:
    """Every tensor slot and Python value a call can reach, and the call's guard key."""

    def __init__(self, fn, args, kwargs):
        self.slots, self.values, self.hooks, self._seen, self._paths = [], [], [], set(), {}
        roots = sorted(_roots(fn, args, kwargs), key=lambda r: not isinstance(r[1], Module))  # nicer paths
        for name, value in roots:
            self._walk(value, name, depth=0)

    def key(self):
        """Hashable, and equal for two calls exactly when one graph serves both."""
        slots = tuple((s.path,) + _describe(s.tensor, s.set is None) for s in self.slots)
        return (("grad mode", is_grad_enabled()),) + slots + tuple(self.values)

    def _walk(self, obj, path, depth):
        if isinstance(obj, Tensor):
            self._tensor(obj, path, None)
        elif id(obj) in self._seen or depth > 6:
            return
        elif isinstance(obj, Module):
            self._seen.add(id(obj))
            self._module(obj, path)
        elif isinstance(obj, Optimizer):
            self._seen.add(id(obj))
            self._optimizer(obj, path)
        elif type(obj) in (list, tuple):
            self._seen.add(id(obj))
            for i, item in enumerate(obj):
                self._walk(item, f"{path}[{i}]", depth + 1)
        elif type(obj) is dict:
            self._seen.add(id(obj))
            for k, item in obj.items():
                self._walk(item, f"{path}[{k!r}]", depth + 1)
        elif isinstance(obj, types.FunctionType) and not _library(obj):
            self._seen.add(id(obj))
            for name, value in _function_roots(obj):
                self._walk(value, name, depth + 1)
        elif type(obj) in _SCALARS and depth == 0:
            self.values.append((path, obj))

    def _tensor(self, t, path, setter):
        if id(t) in self._seen:
            return
        self._seen.add(id(t))
        self._paths[id(t)] = path
        self.slots.append(Slot(path, t, setter))
        if t._backward_hooks or t._post_accumulate_hooks:
            self.hooks.append(f"a hook on {path} runs Python")
        if t.is_leaf and t.requires_grad:
            grad = t._grad
            if grad is not None and id(grad) not in self._seen:
                self._seen.add(id(grad))
            self.slots.append(Slot(path + ".grad", grad, lambda g, t=t: setattr(t, "grad", g)))

    def _module(self, module, path):
        for name, sub in module.named_modules():
            self.values.append((f"{path}{'.' + name if name else ''}.training", sub.training))
            if sub._forward_pre_hooks or sub._forward_hooks or sub._backward_hooks or sub._backward_pre_hooks:
                self.hooks.append(f"a hook on module {path}{'.' + name if name else ''} runs Python")
        for name, t in list(module.named_parameters()) + list(module.named_buffers()):
            self._tensor(t, f"{path}.{name}", None)

    def _optimizer(self, optimizer, path):
        for g, group in enumerate(optimizer.param_groups):
            for k, v in group.items():
                if k != "params":
                    self.values.append((f"{path}.param_groups[{g}].{k}", _hashable(v)))
            for i, p in enumerate(group["params"]):
                self._tensor(p, f"{path}.param_groups[{g}].params[{i}]", None)
        for group in optimizer.param_groups:
            for p in group["params"]:
                state = optimizer.state.get(p)
                spath = f"{path}.state[{self._paths[id(p)]}]"
                self.values.append((spath, tuple(state) if state else None))
                for k, v in (state or {}).items():
                    if isinstance(v, Tensor):
                        self._tensor(v, f"{spath}[{k!r}]", lambda t, s=state, k=k: s.__setitem__(k, t))
                    else:
                        self.values.append((f"{spath}[{k!r}]", _hashable(v)))


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


def _roots(fn, args, kwargs):
    """The function's own arguments by name, then what its code reads from closures and globals."""
    target = getattr(fn, "forward", None) if isinstance(fn, Module) else fn
    code = getattr(target, "__code__", None)
    names = list(code.co_varnames[:code.co_argcount]) if code else []
    if isinstance(target, types.MethodType):
        yield "self", target.__self__
        names = names[1:]
    for i, a in enumerate(args):
        yield (names[i] if i < len(names) else f"args[{i}]"), a
    yield from kwargs.items()
    if isinstance(target, types.MethodType):
        target = target.__func__
    if isinstance(target, types.FunctionType):
        yield from _function_roots(target)


def _function_roots(fn):
    code = fn.__code__
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            yield name, cell.cell_contents
        except ValueError:  # an empty cell
            continue
    for name in _names(code):
        if name in fn.__globals__:
            value = fn.__globals__[name]
            if not isinstance(value, types.ModuleType) and not isinstance(value, type):
                yield name, value


def _names(code):
    """Global names a code object reads, nested functions and comprehensions included."""
    found = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += [n for n in _names(const) if n not in found]
    return found

