"""vmap's machinery: the batched tensor, its levels, and how an op meets one.

Inside ``vmap(f)(xs)``, ``f`` sees a ``BatchedTensor``: one sample's worth of tensor to look at
(its shape, dtype and device are one sample's: ``xs[0]``'s), holding all samples in ``_value``
with the batch dimension first. Its ``_level`` says which vmap it belongs to, so vmaps nest: an
inner vmap's BatchedTensor holds an outer one's, and an op unwraps the innermost level first.

Every op goes through ``Function.apply``; while a vmap is open (autograd/transforms.py), an op
with a batched argument comes here. Its **batching rule** (chibigrad/batching_rules.py) calls the
op once on the whole batch; an op without a rule runs once per sample and warns, as PyTorch's
fallback does. Autograd then records the batched call as any other: gradients are computed on
plain tensors, the samples side by side, which is why vmap(grad(f)) is one backward pass.
"""
import contextlib
import sys
import weakref

import numpy as np

from . import creation
from .autograd import grad as _autograd_grad
from .autograd import transforms
from .ops._util import warn
from .tensor import Tensor

__all__ = ["BatchedTensor", "open_level", "add_batch_dim", "remove_batch_dim"]


class _Level:
    """One open vmap: its number, batch size and randomness mode."""

    def __init__(self, level, size, randomness):
        self.level, self.size, self.randomness = level, size, randomness


_levels = []  # the open vmaps, outermost first
_logical = {}  # id(a BatchedTensor's _array) -> (its batch, level), while that array lives (see level_of)


class BatchedTensor(Tensor):
    """One sample of a batch, as ``f`` sees it inside vmap: ``_value`` holds every sample, the batch
    dimension first; ``_level`` is its vmap's. Its ``_array`` is sample 0, read-only: what shape,
    dtype and device checks read. Ops never compute on it: they come to ``apply`` below."""

    def __repr__(self):
        value = "\n".join("    " + line for line in repr(self._value).splitlines())
        return f"BatchedTensor(lvl={self._level}, bdim=0, value=\n{value}\n)"

    __str__ = __repr__

    def item(self):
        raise RuntimeError("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
                           "calling .item() on a Tensor, please try to rewrite what you're doing with other "
                           "operations. If error is occurring somewhere inside PyTorch internals, please file a bug "
                           "report.")

    def __bool__(self):
        raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
                           "flow. We don't support that yet, please file an issue at "
                           "https://github.com/pytorch/pytorch/issues .")

    __float__ = __int__ = __index__ = item

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    numpy = tolist

    # autograd happens on the samples side by side: these read and write ``_value``
    @property
    def requires_grad(self):
        return self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._value.requires_grad = value

    def requires_grad_(self, requires_grad=True):
        self._value.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._value.grad_fn

    @property
    def _fw_grad(self):
        """Forward mode's ``{level: tangent}``, kept on ``_value`` with the tangents batched too."""
        fw = self._value._fw_grad
        return None if fw is None else {lvl: move_level_in(t, self._level) for lvl, t in fw.items()}

    @_fw_grad.setter
    def _fw_grad(self, value):
        self._value._fw_grad = None if value is None else {lvl: move_level_out(t, self._level)
                                                           for lvl, t in value.items()}

    def _gradient_edge(self):
        return self._value._gradient_edge()

    def _accumulator(self):
        return self._value._accumulator()

    def detach(self):
        return make(self._value.detach(), self._level)

    _shallow_copy = detach

    @property
    def data(self):
        return make(self._value.data, self._level)

    def backward(self, *args, **kwargs):
        raise RuntimeError("backward() called inside a functorch transform. This is not supported, please use "
                           "functorch.grad or functorch.vjp instead or call backward() outside of functorch "
                           "transforms.")

    def _recorded_inplace(self, op, *args, **kwargs):
        """``self.add_(x)``: the op on the batch, written into ``_value`` (which keeps the history)."""
        level = self._level
        self._value._recorded_inplace(lambda v: move_level_out(op(make(v, level), *args, **kwargs), level))
        return self


def make(value, level):
    """A BatchedTensor of ``level`` over ``value`` (its first dim is the batch)."""
    t = object.__new__(BatchedTensor)
    t._value, t._level = value, level
    sample = value._array[0, ...]  # (a view even for a 0-d sample)
    if isinstance(sample, np.ndarray):  # (CuPy's arrays cannot be made read-only)
        sample.flags.writeable = False
    t._array = sample
    t._vc = value._version_counter  # in-place changes are changes of value
    _logical[id(sample)] = (value, level)  # wrappers hand ops this array (torch.where, index keys), even
    weakref.finalize(sample, _logical.pop, id(sample), None)  # after the BatchedTensor itself is gone
    return t


def level_of(args):
    """The innermost vmap level among the arguments (tensors, the arrays of batched tensors, and
    either one level down in a tuple or list, as an index key holds them); None if none is batched."""
    level = None
    for a in args:
        if isinstance(a, (tuple, list)):
            inner = level_of(a)
            if inner is not None and (level is None or inner > level):
                level = inner
            continue
        if isinstance(a, Tensor):
            lvl = a._level
        elif _logical and hasattr(a, "ndim"):  # an array (of any device)
            lvl = _logical.get(id(a), (None, None))[1]
        else:
            continue
        if lvl is not None and (level is None or lvl > level):
            level = lvl
    return level


def size_of(level):
    for lv in _levels:
        if lv.level == level:
            return lv.size
    raise RuntimeError("vmap: a batched tensor escaped the vmap that made it (it was returned through a side "
                       "effect, such as a global or an attribute). Return it from the vmapped function instead.")


# ---- the levels ----

@contextlib.contextmanager
def open_level(size, randomness):
    """A new vmap level of batch ``size``, open for the block; yields its number."""
    level = _Level(len(_levels) + 1, size, randomness)  # numbered by depth, as PyTorch prints them
    _levels.append(level)
    transforms.state.open += 1
    real = creation._generator[0]
    if randomness == "error":
        creation._generator[0] = _NoRandomness(real)
    try:
        yield level.level
    finally:
        if isinstance(creation._generator[0], _NoRandomness):
            creation._generator[0] = real
        _levels.pop()
        transforms.state.open -= 1


class _NoRandomness:
    """chibigrad's generator while vmap(randomness='error') is open: any draw is PyTorch's error."""

    def __init__(self, generator):
        self._generator = generator

    def __getattr__(self, name):
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                           "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
                           "of vmap")


def add_batch_dim(x, dim, level):
    """``x`` seen one sample at a time: dim ``dim`` becomes the batch of ``level``."""
    if dim != 0:
        order = list(range(x.ndim))
        order.insert(0, order.pop(dim))
        x = x.permute(order)
    return make(x, level)


def remove_batch_dim(x, level, size, out_dim):
    """The batch of ``level`` put back as dim ``out_dim`` (an output that is not batched is repeated)."""
    x = move_level_out(x, level, size)
    if out_dim != 0:
        order = list(range(1, x.ndim))
        order.insert(out_dim, 0)
        x = x.permute(order)
    return x


def move_level_out(t, level, size=None):
    """``t`` with the batch of ``level`` as a real first dim (other levels stay batched); repeated
    ``size`` times (the level's size by default) where ``t`` is not batched at ``level``."""
    if t._level == level:
        return t._value
    if t._level is not None and t._level > level:  # an inner level wraps this one: swap the two dims
        return make(move_level_out(t._value, level, size).transpose(0, 1), t._level)
    size = size_of(level) if size is None else size
    return t.unsqueeze(0).expand(size, *t.shape)


def move_level_in(t, level):
    """``t``'s first dim becomes the batch of ``level`` (the inverse of move_level_out)."""
    if t._level is not None and t._level > level:
        return make(move_level_in(t._value.transpose(0, 1), level), t._level)
    return make(t, level)


def levels(t):
    """The vmap levels ``t`` is batched at, innermost first."""
    found = []
    while t._level is not None:
        found.append(t._level)
        t = t._value
    return found


def is_open():
    return bool(_levels)


def batch_to_levels(t, wanted):
    """``t`` batched at each open vmap level in ``wanted``: a gradient transform's own inputs inside vmap
    (``vmap(grad(f))``) must be, since gradients are computed on the samples side by side."""
    if not isinstance(t, Tensor):
        return t
    for lv in _levels:  # outermost first
        if lv.level in wanted and lv.level not in levels(t):
            t = move_level_in(move_level_out(t, lv.level, lv.size), lv.level)
    return t


def physical(t):
    """``t`` with every vmap level unwrapped: the plain tensor autograd records."""
    while t._level is not None:
        t = t._value
    return t


def grad(outputs, inputs, grad_outputs=None, **kwargs):
    """``autograd.grad`` for batched outputs and inputs: on the plain tensors (each output's
    ``grad_output`` given its levels), the gradients batched back as their inputs were."""
    outs, grads = [], []
    for i, out in enumerate(outputs):
        g = None if grad_outputs is None else grad_outputs[i]
        if g is None and out._level is not None:
            g = creation.ones_like(out)
        while out._level is not None:
            g = move_level_out(g, out._level, out._value.shape[0])
            out = out._value
        outs.append(out)
        grads.append(g)
    found = _autograd_grad(outs, [physical(x) for x in inputs], grads, **kwargs)
    return tuple(None if g is None else _batch_like(g, x) for g, x in zip(found, inputs))


def _batch_like(g, x):
    for level in reversed(levels(x)):  # outermost level first: it was the first dim of x's plain tensor
        g = move_level_in(g, level)
    return g


# ---- an op meets a batched argument ----

def apply(cls, args, kwargs, level):
    """``cls.apply(*args)`` where some arguments are batched at ``level``: its rule, or a loop."""
    from .batching_rules import rules
    size = size_of(level)
    rule = rules.get(cls)
    if rule is None:
        return _fallback(cls, args, kwargs, level, size)
    unwrapped = tuple(_unwrap(a, level) for a in args)
    batched = tuple(u is not a for u, a in zip(unwrapped, args))
    try:
        out = rule(cls, unwrapped, batched, size, **kwargs)
    except NotImplementedError as err:
        if not str(err).startswith("Exercise "):
            raise
        out = NotImplemented  # the student edition: a rule assignment 06c has students write, stubbed
    if out is NotImplemented:
        return _fallback(cls, args, kwargs, level, size, warning=False)
    return _wrap(out, level)


def _unwrap(a, level):
    """A batched argument of ``level`` as its whole batch (first dim); anything else as it is."""
    if isinstance(a, Tensor):
        return a._value if a._level == level else a
    if _logical and not isinstance(a, Tensor) and hasattr(a, "ndim"):
        value, lvl = _logical.get(id(a), (None, None))
        if lvl == level:
            return value._array
    if isinstance(a, tuple):
        items = tuple(_unwrap(k, level) for k in a)
        return items if any(i is not k for i, k in zip(items, a)) else a
    return a


def _wrap(out, level):
    if isinstance(out, Tensor):
        return make(out, level)
    if isinstance(out, tuple):
        return type(out)(*[_wrap(o, level) for o in out]) if hasattr(out, "_fields") else \
            tuple(_wrap(o, level) for o in out)
    return out


def inplace_error(op, tensor, result):
    """PyTorch's error for an in-place op that would write a batch into a tensor with one sample."""
    if getattr(op, "__name__", "") == "add":
        return RuntimeError(f"output with shape {list(tensor.shape)} doesn't match the broadcast shape "
                            f"{[result._value.shape[0], *result.shape]}")
    return RuntimeError("vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor "
                        "`other` in extra_args that has more elements than `self`. This happened due to `other` being "
                        "vmapped over but `self` not being vmapped over in a vmap. Please try to use out-of-place "
                        "operators instead of inplace arithmetic. If said operator is being called inside the "
                        "PyTorch framework, please file a bug report instead.")


FALLBACK_WARNING = ("There is a performance drop because we have not yet implemented the batching rule for {}. Please "
                    "file us an issue on GitHub so that we can prioritize its implementation. (Triggered internally "
                    "at /__w/pytorch/pytorch/aten/src/ATen/functorch/BatchedFallback.cpp:82.)")


def _fallback(cls, args, kwargs, level, size, warning=True):
    """No batching rule: the op once per sample, the results stacked (slow: ``size`` calls)."""
    node_name = getattr(cls, "node_name", None)
    if node_name is None and not cls._separate_setup_context:
        raise RuntimeError("In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
                           "...), it must override the setup_context staticmethod. For more details, please see "
                           "https://pytorch.org/docs/main/notes/extending.func.html")
    if node_name is None and not getattr(cls, "generate_vmap_rule", False):
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please override "
                           "and implement the vmap staticmethod or set generate_vmap_rule=True. For more details, "
                           "please see https://pytorch.org/docs/main/notes/extending.func.html")
    if node_name is not None and warning:
        warn(FALLBACK_WARNING.format(aten_name(node_name)))
    results = [cls.apply(*[_sample(a, level, b) for a in args], **kwargs) for b in range(size)]
    from .ops import stack
    if isinstance(results[0], tuple):  # (a named tuple too)
        return _wrap(type(results[0])(*[stack(list(r)) for r in zip(*results)]) if hasattr(results[0], "_fields")
                     else tuple(stack(list(r)) for r in zip(*results)), level)
    return make(stack(results), level)


def aten_name(node_name):
    """PyTorch's operator name for a node's: ``IndexPutBackward0`` is ``aten::index_put``."""
    name = node_name.removesuffix("Backward0").removesuffix("Backward1").removesuffix("Backward")
    return "aten::" + "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


def _sample(a, level, b):
    unwrapped = _unwrap(a, level)
    if unwrapped is a:
        return a
    if isinstance(a, tuple):
        return tuple(_sample(k, level, b) for k in a)
    return unwrapped[b]


transforms.state.batching = sys.modules[__name__]
