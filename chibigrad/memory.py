"""Observable memory: bytes held by tensor data and by saved tensors.

Every array a Tensor wraps is counted once per underlying buffer (views and
``detach()`` share their base's bytes), from the moment a tensor wraps it
until numpy frees it. Saved tensors are counted separately: the bytes a graph
keeps alive for backward, until backward frees them. Both counters keep a
peak, so a chapter can plot what ``retain_graph`` or checkpointing does.

These counters cover tensors on every device; ``chibigrad.cuda.memory_allocated()``
and friends report the CUDA share alone (from the same bookkeeping).

Counting starts the first time a counter is asked for (any function here, or
``chibigrad.cuda.memory_*``). Until then nobody can see the counters, so every
op skips the bookkeeping (a weak reference per array, which would cost more
than a small op itself). When counting starts, the tensors and saved tensors
alive at that moment are found once, and from then on every change is counted.
A peak is the largest value since counting started or since ``reset_peak()``.
"""
import gc
import weakref

import numpy as np

_live = {}  # id(buffer) -> _BufferRef, a weak reference to the buffer
_saved = {}  # id(buffer) -> [nbytes, number of saved tensors holding it]
_stats = {"allocated": 0, "peak_allocated": 0, "saved": 0, "peak_saved": 0}
_counting = False  # True from the first time a counter is asked for


def _buffer(array):
    """The array that owns the memory ``array`` looks at."""
    base = array.base
    if type(array) is np.ndarray:
        return base if type(base) is np.ndarray else array
    while base is not None:  # a CUDA array: follow views (of views) down to the owner
        array, base = base, base.base
    return array


class _BufferRef(weakref.ref):
    """A weak reference that remembers its buffer's key and size: when numpy frees
    the buffer, the callback still knows which entry to drop and how many bytes."""

    __slots__ = ("key", "nbytes")


def _forget(ref):
    """numpy freed a tracked buffer: stop counting it."""
    del _live[ref.key]
    _stats["allocated"] -= ref.nbytes


def track(array):
    """Count ``array``'s buffer as live until numpy frees it."""
    if not _counting:
        return
    if type(array) is not np.ndarray:
        return _track_cuda(_buffer(array))
    base = array.base
    buf = base if type(base) is np.ndarray else array
    key = id(buf)
    if key in _live:
        return
    ref = _live[key] = _BufferRef(buf, _forget)
    ref.key, ref.nbytes = key, buf.nbytes
    stats = _stats
    stats["allocated"] += ref.nbytes
    if stats["allocated"] > stats["peak_allocated"]:
        stats["peak_allocated"] = stats["allocated"]


_cuda_stats = {"allocated": 0, "peak_allocated": 0}


def _track_cuda(buf):
    """``track`` for a CUDA buffer: counted by the CUDA counters as well."""
    key = id(buf)
    if key in _live:
        return
    ref = _live[key] = _BufferRef(buf, _forget_cuda)
    ref.key, ref.nbytes = key, buf.nbytes
    for stats in (_stats, _cuda_stats):
        stats["allocated"] += ref.nbytes
        if stats["allocated"] > stats["peak_allocated"]:
            stats["peak_allocated"] = stats["allocated"]


def _forget_cuda(ref):
    _forget(ref)
    _cuda_stats["allocated"] -= ref.nbytes


def track_saved(array):
    """A saved tensor started holding ``array`` for backward."""
    if not _counting:
        return
    buf = _buffer(array)
    entry = _saved.setdefault(id(buf), [buf.nbytes, 0])
    if entry[1] == 0:
        _stats["saved"] += entry[0]
        if _stats["saved"] > _stats["peak_saved"]:
            _stats["peak_saved"] = _stats["saved"]
    entry[1] += 1


def untrack_saved(array):
    """A saved tensor let go of ``array`` (backward freed it, or the graph died)."""
    if not _counting:
        return
    key = id(_buffer(array))
    entry = _saved[key]
    entry[1] -= 1
    if entry[1] == 0:
        _stats["saved"] -= entry[0]
        del _saved[key]


def _counters():
    """The counters (all devices, CUDA alone), counting from now on if nothing has asked before."""
    global _counting
    if not _counting:
        _counting = True
        _count_what_is_alive()
    return _stats, _cuda_stats


def _count_what_is_alive():
    """Counting starts: count the data of every live tensor and saved tensor, once.
    (A saved output is a bare array, so its data is counted as allocated here too.)"""
    from .autograd.node import SavedTensor
    from .tensor import Tensor
    for obj in gc.get_objects():
        kind = type(obj)  # not isinstance(obj, ...): on a dead weakref.proxy that raises
        if issubclass(kind, Tensor) and hasattr(obj, "_array"):
            track(obj._array)
        elif kind is SavedTensor and getattr(obj, "_data", None) is not None:
            track(obj._data)
            obj._count()  # track_saved, until it is released or dies
    reset_peak()


def allocated():
    """Bytes of tensor data alive now."""
    return _counters()[0]["allocated"]


def max_allocated():
    """Largest ``allocated()`` since the last ``reset_peak()``."""
    return _counters()[0]["peak_allocated"]


def saved():
    """Bytes that saved tensors keep alive for backward now."""
    return _counters()[0]["saved"]


def max_saved():
    """Largest ``saved()`` since the last ``reset_peak()``."""
    return _counters()[0]["peak_saved"]


def reset_peak():
    """Start peaks afresh from the current values."""
    stats = _counters()[0]
    stats["peak_allocated"] = stats["allocated"]
    stats["peak_saved"] = stats["saved"]


def stats():
    """All four counters as a dict (bytes)."""
    return dict(_counters()[0])


class measure:
    """Report what a block allocated, kept and peaked at.

    >>> with chibigrad.memory.measure() as m:
    ...     y = (x * 2).sum()
    >>> m.kept, m.peak, m.saved_kept     # bytes
    """

    def __enter__(self):
        self._start = stats()
        reset_peak()
        return self

    def __exit__(self, *exc):
        end = dict(_stats)
        self.kept = end["allocated"] - self._start["allocated"]
        self.peak = end["peak_allocated"] - self._start["allocated"]
        self.saved_kept = end["saved"] - self._start["saved"]
        self.saved_peak = end["peak_saved"] - self._start["saved"]
        _stats["peak_allocated"] = max(end["peak_allocated"], self._start["peak_allocated"])
        _stats["peak_saved"] = max(end["peak_saved"], self._start["peak_saved"])

    def __repr__(self):
        return (f"measure(kept={self.kept}, peak={self.peak}, "
                f"saved_kept={self.saved_kept}, saved_peak={self.saved_peak})")
