"""``chibigrad.compile``: a training step captured into one straight-line numpy program.

    step = chibigrad.compile(train_step)   # as torch.compile
    step(x, y)      # first call: runs eagerly while tracing every numpy call (forward,
                    # loss.backward() and optimizer.step() alike) into a Graph
    step(x, y)      # later calls: check the guards, then run the generated code
    print(step.code)

Why it is faster: eager autograd pays Python for every recorded node (a Function call,
a graph node, saved tensors, the engine's bookkeeping); the generated code is only the
numpy calls that did the arithmetic. What it costs: the step must be the same numpy
program every time.

Its first promise is that it changes the speed and nothing else. The capture is at the
level of numpy calls (like ``torch.jit.trace`` or ``make_fx``), not of Python bytecode as
``torch._dynamo`` captures it, so the Python around the numpy calls is not in the graph:
a value the step read from Python (``CFG["scale"]``, ``self.lr``, a global, a closure
cell) was baked in as a constant. Hence the guards: before each replay they re-read every
Python value the step can reach from its arguments, closures and globals (dict and list
items, attributes, classes, your modules, optimizer hyper-parameters, grad mode, the default
dtype), and recompile when one differs (``guards.py``). What the guards cannot re-read is a
graph break, found while tracing (``audit.py``): code reached in a way they do not follow,
iterators, random numbers, the clock. Python side effects (``c.n += 1``, ``log.append``,
``nonlocal``) are not replayed: a step that changes Python state runs eagerly (Dynamo
replays such writes after its graph). Data-dependent Python (``.tolist()``, ``if
loss.item() > 0``, a hook, ``print``) cannot be replayed either: the step runs eagerly
too. ``explain`` says where and why, ``recompile_reasons`` why a graph was traced again.

On CUDA the step is traced on host copies of its tensors and the generated program runs on
the device: its ``np`` is the tensors' array module (CuPy, which has numpy's API), and its
constants and buffers are copied to the device once, when it is compiled.
"""
import logging
import sys
import time
import types
import warnings

import numpy as np

from .. import _device
from ..autograd import engine
from ..nn.modules.module import Module
from ..optim.optimizer import Optimizer
from ..tensor import Tensor, wrap
from .graph import DataCheckFailed, Graph, Node
from .audit import Audit
from .guards import Sources, compile_guard
from .passes import eliminate_copies, eliminate_dead_code, expand_scalars, rematerialize, reuse_buffers, simplify
from .tracer import GraphBreak, SymScalar, TracedArray, Tracer, register_hook_caller, register_phase

__all__ = ["compile", "explain", "trace", "CompiledFunction", "GraphBreak", "Graph", "Node"]

log = logging.getLogger("chibigrad.compile")

# Where compile meets the engine: traced arrays are host arrays to the device registry,
# and the tracer labels what runs inside backward and Optimizer.step, and notices hooks.
_device._DEVICES[TracedArray], _device._MODULES[TracedArray] = _device.cpu, np
register_phase(engine.execute, "backward")
register_phase(Optimizer.step, "update")
for _caller in (engine.evaluate_function, engine.call_node):
    register_hook_caller(_caller, lambda frame: _node_hooks(frame.f_locals.get("node")))
register_hook_caller(Module._call_with_hooks, lambda frame: f"module {type(frame.f_locals['self']).__name__}")


def _node_hooks(node):
    """The name of a backward node that has hooks, else None."""
    var = getattr(node, "variable", None)
    if node is not None and (node._pre_hooks or node._post_hooks or node._tensor_hooks or node._retained or (
            var is not None and (var._backward_hooks or var._post_accumulate_hooks))):
        return f"{type(node).__name__} ({'retain_grad' if node._retained else 'hooks'})"
    return None


DEFAULT_OPTIONS = {"optimize": True, "passes": (), "reuse_buffers": True, "rematerialize": False,
                   "reuse_names_above": 500}
"""``options`` of ``compile``: ``optimize=False`` runs no pass at all (the graph as traced); your own
passes, each a function that changes a Graph in place (run after dead-code elimination); write large element-wise results into buffers kept between calls;
recompute cheap forward values in backward instead of keeping them; in graphs of more nodes
than ``reuse_names_above``, let a value take the name of a dead one (fewer live arrays; a short
program keeps one name per value, easier to read)."""


class _Entry:
    """One compiled graph: its guard key, generated function and how to put results back."""

    def __init__(self, key):
        self.key, self.eager_reason, self.graph, self.code, self.run = key, None, None, "", None
        self.inputs, self.writebacks, self.outputs, self.compile_seconds = [], [], None, 0.0
        self.device = _device.cpu  # where the generated code runs: the device of the step's tensors


class CompiledFunction:
    """What ``chibigrad.compile(fn)`` returns: call it as ``fn``. ``code`` and ``graph`` show
    the latest graph; ``compile_count`` counts traces, ``recompile_reasons`` says why."""

    def __init__(self, fn, fullgraph=False, cache_size_limit=8, options=None):
        self.fn, self.fullgraph, self.cache_size_limit = fn, fullgraph, cache_size_limit
        self.options = dict(DEFAULT_OPTIONS, **(options or {}))
        unknown = set(self.options) - set(DEFAULT_OPTIONS)
        if unknown:
            raise ValueError(f"chibigrad.compile: unknown option(s) {sorted(unknown)}; the options are "
                             f"{sorted(DEFAULT_OPTIONS)}")
        self._cache, self._entries, self._latest = {}, [], None
        self.compile_count, self.recompile_reasons, self.graph_breaks = 0, [], []
        self.eager_calls, self._limit_warned, self.side_effects, self._side_effect_traces = 0, False, None, 0
        self.__wrapped__ = fn

    @property
    def code(self):
        """The Python source of the latest graph."""
        return self._latest.code if self._latest else ""

    @property
    def guards(self):
        """The Python source of the latest graph's guard function."""
        return self._latest.guard_code if self._latest else ""

    @property
    def graph(self):
        return self._latest.graph if self._latest else None

    def __getattr__(self, name):  # a compiled module still has its parameters(), train(), ...
        if name.startswith("__") or "fn" not in self.__dict__:
            raise AttributeError(name)
        return getattr(self.fn, name)

    def __call__(self, *args, **kwargs):
        if self.side_effects:  # the step changed Python state in two traces: every call runs eagerly
            self.eager_calls += 1
            return self.fn(*args, **kwargs)
        for entry in self._entries:  # the guards of each graph, most recent first
            try:
                slots = entry.guard(args, kwargs)
            except (LookupError, AttributeError, TypeError, ValueError):  # something the guard reads is gone
                slots = None
            if slots is not None:
                break
        else:
            if len(self._cache) >= self.cache_size_limit:
                return self._over_limit(args, kwargs)
            sources = Sources(self.fn, args, kwargs)
            return self._compile(sources.key(), sources, args, kwargs)
        if entry.eager_reason:
            self.eager_calls += 1
            return self.fn(*args, **kwargs)
        self._latest = entry
        return self._replay(entry, slots, args, kwargs)

    def _over_limit(self, args, kwargs):
        if not self._limit_warned:
            self._limit_warned = True
            warnings.warn(f"chibigrad.compile: {_name(self.fn)} reached cache_size_limit ({self.cache_size_limit}) "
                          f"after {self.compile_count} compiles (last reason: {self.recompile_reasons[-1]}); "
                          "running it eagerly from now on", stacklevel=3)
        self.eager_calls += 1
        return self.fn(*args, **kwargs)

    # --- replay ---------------------------------------------------------------------------
    def _replay(self, entry, slots, args, kwargs):
        try:
            results = entry.run(*[slots[i]._array for i in entry.inputs])
        except DataCheckFailed as failed:
            log.info("chibigrad.compile: %s: %s differs from the trace; this call runs eagerly", _name(self.fn),
                     failed.args[0])
            self.eager_calls += 1
            return self.fn(*args, **kwargs)
        for (kind, i, requires_grad), array in zip(entry.writebacks, results):
            if kind == "rebind":
                slots[i]._array = array
            elif kind == "new":
                entry.setters[i](slots, wrap(array, requires_grad))
            else:
                entry.setters[i](slots, None)
        return _build(entry.outputs, results[len(entry.writebacks):])

    # --- compile --------------------------------------------------------------------------
    def _compile(self, key, sources, args, kwargs):
        entry = _Entry(key)
        if self._cache:
            reason = _guard_difference(min(self._cache, key=lambda old: _distance(old, key)), key)
            self.recompile_reasons.append(reason)
            log.info("chibigrad.compile: recompiling %s (compile %d): %s", _name(self.fn), self.compile_count + 1,
                     reason)
        self.compile_count += 1
        self._cache[key] = self._latest = entry
        entry.guard_code = sources.guard_source()
        entry.guard = compile_guard(sources, entry.guard_code)
        entry.setters = [slot.set for slot in sources.slots]
        self._entries.insert(0, entry)
        start = time.perf_counter()
        result, reason = self._trace(entry, sources, args, kwargs)
        entry.compile_seconds = time.perf_counter() - start
        if reason:
            entry.eager_reason = reason
            self.graph_breaks.append(reason)
            if reason.startswith(_SIDE_EFFECT):  # once may be a lazy initialisation; twice, it is the step
                self._side_effect_traces += 1
                self.side_effects = reason if self._side_effect_traces > 1 else None
            log.info("chibigrad.compile: graph break in %s: %s; it runs eagerly", _name(self.fn), reason)
            if self.fullgraph:
                raise GraphBreak(f"{reason} (fullgraph=True; this call ran eagerly)")
        return result

    def _trace(self, entry, sources, args, kwargs):
        """Run the step once with traced arrays; fill ``entry``; return (result, graph-break reason)."""
        if sources.hooks:
            return self.fn(*args, **kwargs), sources.hooks[0]
        entry.device = _step_device(sources.slots)
        if isinstance(entry.device, str):
            entry.eager_reason = entry.device  # before the call: eager may raise (two devices do)
            return self.fn(*args, **kwargs), entry.device
        home = _home(entry.device)
        tracer = Tracer()
        placeholders = {}
        for slot in sources.slots:
            t = slot.tensor
            if t is not None and id(t) not in placeholders and type(t._array) is not TracedArray:
                traced = tracer.placeholder(_device.to_device(t._array, _device.cpu), slot.path)  # a host copy on CUDA
                placeholders[id(t)] = (t, t._array, traced, traced._node)
                t._array, t._meta = traced, None  # _meta caches the array type
        try:
            with tracer, Audit(sources.reached, tracer.graph_break):
                result = self.fn(*args, **kwargs)
            after = Sources(self.fn, args, kwargs, replace_traced=True)
            reason = tracer.broken or self._plan(entry, tracer, sources, after, placeholders, result) or \
                _side_effect(sources, after)
        finally:
            for t, original, traced, _ in placeholders.values():
                if t._array is traced and entry.device.type == "cuda":  # it may have changed the host copy in place
                    original[...] = home(traced.view(np.ndarray))
                t._array, t._meta = original if t._array is traced else home(t._array.view(np.ndarray)), None
            _detach_all(result if "result" in locals() else None,
                        after.slots if "after" in locals() else sources.slots, home)
        if not reason:
            self._generate(entry, tracer.graph)
        return _python_numbers(result), reason

    def _plan(self, entry, tracer, before, after, placeholders, result):
        """Which arrays the replay returns and where they go; a reason if the step cannot be replayed."""
        index = {s.path: i for i, s in enumerate(before.slots)}
        targets = []
        for slot in after.slots:
            t, i = slot.tensor, index.get(slot.path)
            was = before.slots[i].tensor if i is not None else None
            if t is was and (t is None or t._array is placeholders[id(t)][2]):
                continue  # untouched, or changed in place (the replay writes the same memory)
            if i is None or (t is not was and before.slots[i].set is None):
                return f"the step stores a new tensor in {slot.path}; it is compiled again once that exists"
            if t is None:
                entry.writebacks.append(("none", i, False))
                continue
            if not isinstance(t._array, TracedArray) or getattr(t._array, "_node", None) is None:
                return f"{slot.path} holds an array the trace did not record"
            entry.writebacks.append(("rebind" if t is was else "new", i, t.requires_grad))
            targets.append(t._array._node)
        outputs, out_nodes = _flatten(result, tracer)
        if isinstance(outputs, str):
            return outputs
        entry.outputs = outputs
        entry.inputs = {id(placeholders[id(s.tensor)][3]): i for i, s in enumerate(before.slots)
                        if s.tensor is not None and id(s.tensor) in placeholders}
        tracer.graph.output(targets + out_nodes)
        return None

    def _generate(self, entry, graph):
        if not self.options["optimize"]:
            return self._emit(entry, graph)
        eliminate_dead_code(graph)
        for graph_pass in self.options["passes"]:
            graph_pass(graph)
            eliminate_dead_code(graph)
        if simplify(graph):
            eliminate_dead_code(graph)
        eliminate_copies(graph)
        expand_scalars(graph)
        if self.options["rematerialize"]:
            rematerialize(graph)
        if self.options["reuse_buffers"]:
            reuse_buffers(graph)
        if len(graph.nodes) > self.options["reuse_names_above"]:
            graph.reuse_names()
        self._emit(entry, graph)

    def _emit(self, entry, graph):
        entry.inputs = [entry.inputs[id(p)] for p in graph.placeholders]
        source, globals_ = graph.python_code(_safe_name(_name(self.fn)))
        globals_ = _globals_on(entry.device, globals_)
        filename = f"<chibigrad.compile {_name(self.fn)} #{self.compile_count}>"
        exec(builtins_compile(source, filename, "exec"), globals_)  # noqa: S102 - code we generated
        entry.graph, entry.code = graph, source
        entry.run = globals_[_safe_name(_name(self.fn))]


builtins_compile = compile  # the module defines its own ``compile`` below


def _flatten(result, tracer):
    """``result`` as a spec for ``_build`` plus the Nodes it needs; a string says why it cannot be."""
    nodes = []

    def spec(obj):
        if isinstance(obj, Tensor):
            arr = obj._array
            if not isinstance(arr, TracedArray) or getattr(arr, "_node", None) is None:
                raise _Unreplayable("the step returns a tensor the trace did not record")
            if obj.grad_fn is not None and not tracer.ran_backward:
                raise _Unreplayable("the result needs a backward that runs after the compiled function returns: "
                                    "compile the whole step (forward, loss.backward(), optimizer.step()) or run "
                                    "it under torch.no_grad()")
            nodes.append(arr._node)
            return ("tensor", len(nodes) - 1)
        if isinstance(obj, SymScalar):
            nodes.append(obj._node)
            return ("scalar", len(nodes) - 1)
        if type(obj) in (tuple, list):
            return (type(obj), [spec(x) for x in obj])
        if obj is None or type(obj) in (bool, int, float, str):
            return ("const", obj)
        raise _Unreplayable(f"the step returns a {type(obj).__name__}, which chibigrad.compile cannot replay")

    try:
        return spec(result), nodes
    except _Unreplayable as err:
        return str(err), nodes


class _Unreplayable(Exception):
    pass


def _build(spec, arrays):
    kind, value = spec
    if kind == "tensor":
        return wrap(arrays[value])
    if kind == "scalar":
        return arrays[value]
    if kind == "const":
        return value
    return kind(_build(s, arrays) for s in value)


def _step_device(slots):
    """The device of the step's tensors, or a reason (a string) when they are on two."""
    devices = {_device.device_of(s.tensor._array) for s in slots if s.tensor is not None}
    if len(devices) > 1:
        return f"the step's tensors are on {' and '.join(sorted(map(str, devices)))}; it runs eagerly"
    return devices.pop() if devices else _device.cpu


def _home(device):
    """Moves a host array the trace made to ``device`` (a CUDA step is traced on the host)."""
    return lambda array: _device.to_device(array, device)


def _globals_on(device, globals_):
    """The generated code's globals for a step on ``device``: on CUDA ``np`` is the device's array
    module (CuPy) and the constants and buffers are copied to the device once, here."""
    if device.type == "cpu":
        return globals_
    moved = {k: _device.to_device(v, device) if type(v) is np.ndarray else v for k, v in globals_.items()}
    moved["np"] = _device.cuda_backend().xp
    return moved


def _detach_all(result, slots, home):
    """After tracing, no tensor the caller can reach keeps a TracedArray; ``home`` puts its array
    on the step's device."""
    tensors = [s.tensor for s in slots if s.tensor is not None]
    stack = [result]
    while stack:
        obj = stack.pop()
        if isinstance(obj, Tensor):
            tensors.append(obj)
        elif type(obj) in (tuple, list):
            stack.extend(obj)
    for t in tensors:
        if isinstance(t._array, TracedArray):
            t._array, t._meta = home(t._array.view(np.ndarray)), None


_SIDE_EFFECT = "the step changes Python state"


def _side_effect(before, after):
    """The first Python value the step changed (or left a traced value in), in words; else None.
    The graph replays array operations only, so such a step runs eagerly."""
    if after.unreadable:
        return f"{_SIDE_EFFECT}: it keeps an array of the trace in {after.unreadable[0]}"
    changed = [path for path, now in after.state.items() if repr(before.state.get(path, "absent")) != repr(now)]
    changed.sort(key=lambda path: not _is_value(after.state[path]))  # c.n before c.__dict__
    if changed:
        path = changed[0]
        return (f"{_SIDE_EFFECT}: {path} ({_show_state(before.state.get(path, 'absent'))} -> "
                f"{_show_state(after.state[path])}); side effects are not replayed")
    gone = [path for path in before.state if path not in after.state]
    return f"{_SIDE_EFFECT}: {gone[0]} is gone; side effects are not replayed" if gone else None


def _is_value(record):
    return type(record) is tuple and len(record) == 2 and record[0] in (bool, int, float, str, type(None))


def _show_state(value):
    if value == "absent":
        return value
    if type(value) is tuple and len(value) == 2 and isinstance(value[0], type):
        kind, v = value
        return f"{len(v) if kind is dict else v} item(s)" if kind in (list, tuple, dict) else repr(v)
    if type(value) is tuple and value[:1] == ("object",):
        return f"object {value[1]:#x}"
    return repr(value)


def _python_numbers(result):
    """``result`` with numbers read by ``.item()`` while tracing as Python numbers, as eager gives them."""
    if isinstance(result, SymScalar):
        return result.value
    if type(result) in (tuple, list):
        return type(result)(_python_numbers(r) for r in result)
    return result


def _distance(old, new):
    """How many guard entries differ: the recompile reason is given against the closest graph."""
    old_d = {e[0]: e[1:] for e in old}
    return sum(old_d.get(e[0]) != e[1:] for e in new) + abs(len(old) - len(new))


def _guard_difference(old, new):
    """The first guard entry that differs, in words."""
    old_d = {e[0]: e[1:] for e in old}
    for e in new:
        if old_d.get(e[0]) != e[1:]:
            return f"{e[0]}: {_show(old_d.get(e[0]))} -> {_show(e[1:])}"
    missing = [e[0] for e in old if e[0] not in {n[0] for n in new}]
    return f"{missing[0]} is gone" if missing else "the guards differ"


def _show(d):
    if d is None:
        return "absent"
    if d == (None,):
        return "None"
    if len(d) == 5:
        _, shape, dtype, kind, rg = d
        on = "" if kind is np.ndarray else f" on {_device.device_of_type(kind)}"
        return f"tensor shape {shape} {np.dtype(dtype).name}{on}{' requires_grad' if rg else ''}"
    return repr(d[0] if len(d) == 1 else d)


def _name(fn):
    return getattr(fn, "__name__", None) or type(fn).__name__


def _safe_name(name):
    name = "".join(c if c.isalnum() else "_" for c in name)
    return name if name and not name[0].isdigit() else "compiled_" + name


def compile(model=None, *, fullgraph=False, cache_size_limit=8, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """Compile ``model`` (a function or a Module), as ``torch.compile``; usable as a decorator.

    ``fullgraph=True`` raises ``GraphBreak`` where the step cannot be one graph (after running
    it eagerly) instead of quietly running it eagerly. ``options`` switches passes on or off
    (``DEFAULT_OPTIONS``). ``backend`` and ``mode`` are accepted for PyTorch's spelling;
    chibigrad has one backend (numpy code)."""
    if dynamic:
        raise NotImplementedError("chibigrad.compile specializes on shapes: dynamic=True is not supported; "
                                  "a new shape recompiles")
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, cache_size_limit=cache_size_limit, options=options,
                                 disable=disable)
    if not callable(model):
        raise TypeError(f"chibigrad.compile expects a function or a Module, but got {type(model).__name__}")
    if disable:
        return model
    return CompiledFunction(model, fullgraph=fullgraph, cache_size_limit=cache_size_limit, options=options)


class ExplainOutput:
    """What ``explain`` found: the number of graphs and graph breaks, why, and the ops; and for a
    compiled function that has run, why it recompiled and how many calls ran eagerly."""

    def __init__(self, compiled):
        self.graph_count = sum(1 for e in compiled._cache.values() if not e.eager_reason)
        self.break_reasons = list(compiled.graph_breaks)
        self.graph_break_count = len(self.break_reasons)
        self.recompile_reasons = list(compiled.recompile_reasons)
        self.compile_count, self.eager_calls = compiled.compile_count, compiled.eager_calls
        self.graphs = [e.graph for e in compiled._cache.values() if e.graph is not None]
        self.op_count = sum(len([n for n in g.nodes if n.op == "call"]) for g in self.graphs)

    def __repr__(self):
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}"]
        if self.break_reasons:
            lines.append("Break Reasons:")
            lines += [f"  Break Reason {i + 1}: {r}" for i, r in enumerate(self.break_reasons)]
        if self.recompile_reasons:
            lines.append("Recompile Reasons:")
            lines += [f"  Recompile Reason {i + 1}: {r}" for i, r in enumerate(self.recompile_reasons)]
        if self.eager_calls:
            lines.append(f"Eager Calls: {self.eager_calls} (after compiling)")
        return "\n".join(lines)


def explain(fn):
    """``explain(fn)(*args)`` runs ``fn`` once under a fresh compile and reports its graphs and
    graph breaks, as ``torch._dynamo.explain`` does (the call's side effects happen).
    ``explain(compiled)`` (a function ``chibigrad.compile`` returned) reports what its calls so
    far did, recompiles and eager calls included, without calling it."""
    if isinstance(fn, CompiledFunction):
        return ExplainOutput(fn)

    def run(*args, **kwargs):
        compiled = CompiledFunction(fn)
        compiled(*args, **kwargs)
        return ExplainOutput(compiled)
    return run


def trace(fn, *args, **kwargs):
    """Run ``fn(*args, **kwargs)`` once while tracing and return its Graph as recorded, before
    any pass (the call's side effects happen). A graph break raises ``GraphBreak``."""
    compiled = CompiledFunction(fn, fullgraph=True, options={"optimize": False})
    compiled(*args, **kwargs)
    return compiled.graph


class _CallableModule(types.ModuleType):
    """``chibigrad.compile(fn)`` as in PyTorch, while ``chibigrad.compile.explain`` stays a module attribute."""

    def __call__(self, *args, **kwargs):
        return compile(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
