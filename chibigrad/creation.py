"""Creating tensors: from data, filled, ranges and random numbers.

Random numbers come from one global numpy Generator seeded by
``manual_seed``; its state can be saved and restored, which is what
checkpointing needs to replay dropout exactly. (The numbers differ from
PyTorch's: only the API and the distributions match.)
"""
import warnings

import numpy as np

from . import _dtype
from ._dtype import from_numpy_dtype, get_default_dtype
from .tensor import Tensor, wrap


def _finish(array, dtype, requires_grad):
    if dtype is not None:
        array = array.astype(dtype.np_type, copy=False)
    t = wrap(array)
    if requires_grad:
        if not t.dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._set_requires_grad(True)
    return t


def _infer_dtype(data):
    """PyTorch's choice for Python data: floats -> float32, ints -> int64, bools -> bool."""
    arr = np.asarray(data)
    if arr.dtype.kind == "f":
        return get_default_dtype()
    if arr.dtype.kind in "iu":
        return _dtype.int64
    if arr.dtype.kind == "b":
        return _dtype.bool
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new leaf tensor holding a copy of ``data``."""
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        array = data._array.copy()
    elif isinstance(data, (np.ndarray, np.generic)):  # numpy arrays and scalars keep their dtype
        array = np.array(data)
        from_numpy_dtype(array.dtype)
    else:
        array = np.array(_unwrap(data))
        dtype = dtype or _infer_dtype(array)
    return _finish(array, dtype, requires_grad)


def _unwrap(data):
    """Nested lists may contain 0-d tensors (``torch.tensor([a, b])``)."""
    if isinstance(data, Tensor):
        return data._array
    if isinstance(data, (list, tuple)):
        return [_unwrap(d) for d in data]
    return data


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor) and (dtype is None or data.dtype is dtype):
        return data
    if isinstance(data, np.ndarray):
        return _finish(data, dtype, False)
    return tensor(data, dtype=dtype)


def from_numpy(array):
    """A tensor sharing memory with ``array`` (changes show through both ways)."""
    from_numpy_dtype(array.dtype)
    return wrap(array)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


def _filled(fill, size, dtype, requires_grad):
    dtype = dtype or get_default_dtype()
    return _finish(np.full(_size(size), fill, dtype=dtype.np_type), None, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return _filled(0, size, dtype, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return _filled(1, size, dtype, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    return _filled(0, size, dtype, requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = _infer_dtype(fill_value)
    return _filled(fill_value, (size,), dtype, requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    return _finish(np.eye(n, m, dtype=(dtype or get_default_dtype()).np_type), None, requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = _infer_dtype([start, end, step])
    return _finish(np.arange(start, end, step).astype(dtype.np_type), None, requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    dtype = dtype or get_default_dtype()
    return _finish(np.linspace(start, end, steps, dtype=np.float64).astype(dtype.np_type), None, requires_grad)


def _like(fn, t, dtype, requires_grad, *args):
    return fn(*args, *t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad) if args == () else \
        fn(t.shape, *args, dtype=dtype or t.dtype, requires_grad=requires_grad)


def zeros_like(t, dtype=None, device=None, requires_grad=False):
    return _like(zeros, t, dtype, requires_grad)


def ones_like(t, dtype=None, device=None, requires_grad=False):
    return _like(ones, t, dtype, requires_grad)


def empty_like(t, dtype=None, device=None, requires_grad=False):
    return _like(empty, t, dtype, requires_grad)


def full_like(t, fill_value, dtype=None, device=None, requires_grad=False):
    return _like(full, t, dtype, requires_grad, fill_value)


# ---- random numbers ------------------------------------------------------
_generator = [np.random.default_rng(0)]


def manual_seed(seed):
    """Reseed the global generator so runs repeat."""
    _generator[0] = np.random.default_rng(seed)


def get_rng_state():
    """A snapshot of the generator, for ``set_rng_state`` (checkpointing replays dropout with it)."""
    return _generator[0].bit_generator.state


def set_rng_state(state):
    _generator[0].bit_generator.state = state


def default_generator():
    return _generator[0]


def randn(*size, dtype=None, device=None, requires_grad=False):
    dtype = dtype or get_default_dtype()
    return _finish(_generator[0].standard_normal(_size(size), dtype=np.float64).astype(dtype.np_type), None,
                   requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False):
    dtype = dtype or get_default_dtype()
    return _finish(_generator[0].random(_size(size)).astype(dtype.np_type), None, requires_grad)


def randint(low, high=None, size=None, dtype=None, device=None, requires_grad=False):
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    return _finish(_generator[0].integers(low, high, size=tuple(size)), dtype or _dtype.int64, requires_grad)


def randn_like(t, dtype=None, device=None, requires_grad=False):
    return randn(*t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad)


def rand_like(t, dtype=None, device=None, requires_grad=False):
    return rand(*t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad)


def randperm(n, dtype=None, device=None):
    return wrap(_generator[0].permutation(n).astype((dtype or _dtype.int64).np_type))
