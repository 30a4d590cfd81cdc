"""torch.autograd.profiler: where the time goes, op by op and node by node.

Inside ``with profile() as prof:`` every op's forward (each ``Function.apply``), every node
backward runs and every ``record_function("name")`` block becomes a timed event. Events nest:
an op's *self* time excludes the ops it called (a backward formula calls ops too).
``prof.key_averages().table(sort_by="self_cpu_time_total")`` sums them by name, as PyTorch's
table does. The profiler swaps in a timed ``Function.apply`` while it is active, so code
that is not profiled pays nothing; the engine times nodes through ``timed_node``.

chibigrad's names are its own: an op's forward is its Function's name (``Mul``,
``Addmm``), its backward the node's (``MulBackward0``); PyTorch's tables show ``aten::mul``.
"""
import collections
import functools
import time

__all__ = ["profile", "record_function"]

_active = []  # the profile being recorded, if any


class FunctionEvent:
    """One timed call: its name, its time in microseconds and the time of the events inside it."""

    def __init__(self, name):
        self.name, self.cpu_time_total, self.children_time = name, 0.0, 0.0

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - self.children_time


class _Recorder:
    """The events of one profile, and the stack of those still running."""

    def __init__(self):
        self.events, self.stack = [], []

    def start(self, name):
        event = FunctionEvent(name)
        self.stack.append(event)
        event.start = time.perf_counter()
        return event

    def stop(self, event):
        event.cpu_time_total = (time.perf_counter() - event.start) * 1e6
        self.stack.pop()
        if self.stack:  # the enclosing event's self time excludes this one
            self.stack[-1].children_time += event.cpu_time_total
        self.events.append(event)

    def timed(self, name, fn, *args, **kwargs):
        event = self.start(name)
        try:
            return fn(*args, **kwargs)
        finally:
            self.stop(event)


def timed_node(evaluate):
    """The engine's ``evaluate(node, ...)``, timed under the node's name (while a profile is active)."""
    recorder = _active[-1]._recorder

    @functools.wraps(evaluate)
    def timed_evaluate(node, *args):
        return recorder.timed(node.name(), evaluate, node, *args)
    return timed_evaluate


class profile:  # noqa: N801 - PyTorch's name
    """Time every op, backward node and ``record_function`` block run inside the ``with`` block."""

    def __init__(self, enabled=True, use_cuda=False, record_shapes=False, profile_memory=False, with_stack=False,
                 **kwargs):
        self.enabled = enabled
        self._recorder = _Recorder()
        self._plain_apply = None

    def __enter__(self):
        if not self.enabled:
            return self
        if _active:
            raise RuntimeError("Profiler is already enabled on this thread")
        from .function import Function  # (the engine imports this module before function exists)
        _active.append(self)
        self._plain_apply = Function.__dict__["apply"]
        recorder, plain = self._recorder, self._plain_apply.__func__

        def apply(cls, *args, **kwargs):
            return recorder.timed(cls.__name__, plain, cls, *args, **kwargs)
        Function.apply = classmethod(apply)
        return self

    def __exit__(self, *exc):
        if self.enabled and _active and _active[-1] is self:
            from .function import Function
            Function.apply = self._plain_apply
            _active.pop()

    def events(self):
        return EventList(self._recorder.events)

    def key_averages(self, group_by_input_shape=False):
        """The events summed by name."""
        totals = collections.OrderedDict()
        for event in self._recorder.events:
            total = totals.setdefault(event.name, _Average(event.name))
            total.add(event)
        return EventList(list(totals.values()))

    def table(self, sort_by=None, row_limit=100):
        return self.key_averages().table(sort_by=sort_by, row_limit=row_limit)

    def __str__(self):
        return self.table()


class _Average(FunctionEvent):
    def __init__(self, name):
        super().__init__(name)
        self.count = 0

    def add(self, event):
        self.count += 1
        self.cpu_time_total += event.cpu_time_total
        self.children_time += event.children_time

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count


_SORT_KEYS = {"self_cpu_time_total", "cpu_time_total", "cpu_time", "count"}


class EventList(list):
    def table(self, sort_by=None, row_limit=100):
        """A table in the layout of PyTorch's: name, self and total time (% and value), average, calls."""
        rows = list(self)
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise AttributeError(f"chibigrad's profiler sorts by one of {sorted(_SORT_KEYS)}, not {sort_by!r}")
            rows.sort(key=lambda e: getattr(e, sort_by if sort_by != "cpu_time" else "cpu_time_total"),
                      reverse=True)
        rows = rows[:row_limit] if row_limit and row_limit > 0 else rows
        self_total = sum(e.self_cpu_time_total for e in self) or 1.0
        width = max([len("Name")] + [len(e.name) for e in rows])
        heads = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
        rule = "-" * width + "  " + "  ".join("-" * 12 for _ in heads)
        lines = [rule, "Name".rjust(width) + "  " + "  ".join(h.rjust(12) for h in heads), rule]
        for e in rows:
            count = getattr(e, "count", 1)
            cells = [f"{100 * e.self_cpu_time_total / self_total:.2f}%", _time(e.self_cpu_time_total),
                     f"{100 * e.cpu_time_total / self_total:.2f}%", _time(e.cpu_time_total),
                     _time(e.cpu_time_total / count), str(count)]
            lines.append(e.name.rjust(width) + "  " + "  ".join(c.rjust(12) for c in cells))
        lines += [rule, f"Self CPU time total: {_time(self_total)}", ""]
        return "\n".join(lines)


def _time(us):
    """Microseconds as PyTorch prints them: us, ms or s."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class record_function:  # noqa: N801
    """A named block in the profile (``with record_function("forward"):``), or a decorator."""

    def __init__(self, name, args=None):
        self.name = name
        self._event = None

    def __enter__(self):
        if _active:
            self._event = _active[-1]._recorder.start(self.name)
        return self

    def __exit__(self, *exc):
        if self._event is not None:
            _active[-1]._recorder.stop(self._event)
            self._event = None

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)
        return wrapper
