"""Creating tensors: from data, filled, ranges and random numbers.

Random numbers come from one global numpy Generator seeded by
``manual_seed``; its state can be saved and restored, which is what
checkpointing needs to replay dropout exactly. (The numbers differ from
PyTorch's: only the API and the distributions match.)
"""
import functools
import warnings

import numpy as np

from . import _device, _dtype
from ._dtype import from_numpy_dtype, get_default_dtype
from .tensor import Tensor, wrap


def _dtype_argument(create):
    """``dtype=`` may also be Python's float, int or bool, as in PyTorch."""
    @functools.wraps(create)
    def creating(*args, **kwargs):
        if kwargs.get("dtype") is not None:
            kwargs["dtype"] = _dtype.as_dtype(kwargs["dtype"], create.__name__)
        return create(*args, **kwargs)
    return creating


def _finish(array, dtype, requires_grad, device=None):
    """The tensor for ``array``, made on the host: moved to ``device``, cast to ``dtype``.

    Creating on the host and copying keeps one random generator for every device,
    so a seed gives the same numbers on the CPU and on CUDA."""
    if dtype is not None:
        array = array.astype(dtype.np_type, copy=False)
    if device is None:
        device = _device.get_default_device()  # torch.set_default_device
    if device is not _device.cpu:
        array = _device.to_device(array, _device.as_device(device))
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


@_dtype_argument
def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new leaf tensor holding a copy of ``data``."""
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        array = data._array.copy()
        device = device or data.device
    elif isinstance(data, (np.ndarray, np.generic)):  # numpy arrays and scalars keep their dtype
        array = np.array(data)
        from_numpy_dtype(array.dtype)
    else:
        array = _nested_array(data)
        dtype = dtype or _infer_dtype(array)
    return _finish(array, dtype, requires_grad, device)


def _nested_array(data):
    """Python data as an array, refused with PyTorch's words when it is not a rectangular
    array of numbers (numpy would speak of inhomogeneous parts, or make an object array)."""
    try:
        array = np.array(_unwrap(data))
    except ValueError:
        _check_nesting(data, _nested_shape(data), 0)
        raise
    if array.dtype.kind in "US":
        raise TypeError(f"new(): invalid data type '{'str' if array.dtype.kind == 'U' else 'bytes'}'")
    if array.dtype == np.uint64 or array.dtype.kind == "O" and all(isinstance(x, int) for x in array.flat):
        raise ValueError("Overflow when unpacking long long")  # Python ints past int64 (numpy: uint64 or objects)
    if array.dtype.kind == "O":
        odd = next((x for x in array.flat if not isinstance(x, (bool, int, float, np.generic))), array.flat[0])
        raise RuntimeError(f"Could not infer dtype of {type(odd).__name__}")
    return array


def _nested_shape(data):
    """The shape the first element at each depth announces, as PyTorch reads nested lists."""
    shape = []
    while isinstance(data, (list, tuple)):
        shape.append(len(data))
        if not data:
            break
        data = data[0]
    return shape


def _check_nesting(data, shape, dim):
    """PyTorch's error for a list whose length (or nesting) differs from what ``shape`` announced."""
    if dim == len(shape):
        return
    if not isinstance(data, (list, tuple)):
        raise TypeError("not a sequence")
    if len(data) != shape[dim]:
        raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} (got {len(data)})")
    for item in data:
        _check_nesting(item, shape, dim + 1)


def _unwrap(data):
    """Nested lists may contain 0-d tensors (``torch.tensor([a, b])``)."""
    if isinstance(data, Tensor):
        return data.cpu()._array
    if isinstance(data, (list, tuple)):
        return [_unwrap(d) for d in data]
    return data


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype)
    if isinstance(data, np.ndarray):
        return _finish(data, dtype, False, device)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array):
    """A tensor sharing memory with ``array`` (changes show through both ways)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    from_numpy_dtype(array.dtype)
    return wrap(array)


def _size(size, fn_name):
    """The shape given as ``f(2, 3)`` or ``f((2, 3))``, checked as PyTorch checks it."""
    if len(size) == 1 and not isinstance(size[0], (tuple, list)) and not _is_int(size[0]):
        raise TypeError(f"{fn_name}(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size[0]).__name__}")
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    for i, n in enumerate(size):
        if not _is_int(n):
            raise TypeError(f"{fn_name}(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                            f"\"type must be tuple of ints,but got {type(n).__name__}\"")
    if any(n < 0 for n in size):
        if fn_name == "zeros":
            raise RuntimeError("zeros: Dimension size must be non-negative.")
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    return tuple(int(n) for n in size)


def _is_int(n):
    return isinstance(n, (int, np.integer)) and not isinstance(n, bool) or isinstance(n, Tensor) and n.numel() == 1 \
        and not n.dtype.is_floating_point


def _filled(fill, size, dtype, requires_grad, device, fn_name):
    dtype = dtype or get_default_dtype()
    return _finish(np.full(_size(size, fn_name), fill, dtype=dtype.np_type), None, requires_grad, device)


@_dtype_argument
def zeros(*size, dtype=None, device=None, requires_grad=False):
    return _filled(0, size, dtype, requires_grad, device, "zeros")


@_dtype_argument
def ones(*size, dtype=None, device=None, requires_grad=False):
    return _filled(1, size, dtype, requires_grad, device, "ones")


@_dtype_argument
def empty(*size, dtype=None, device=None, requires_grad=False):
    return _filled(0, size, dtype, requires_grad, device, "empty")


@_dtype_argument
def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = _infer_dtype(fill_value)
    return _filled(fill_value, (size,), dtype, requires_grad, device, "full")


@_dtype_argument
def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    for name, size in (("n", n), ("m", m)):
        if size is not None and size < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {size}")
    return _finish(np.eye(n, m, dtype=(dtype or get_default_dtype()).np_type), None, requires_grad, device)


@_dtype_argument
def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        dtype = _infer_dtype([start, end, step])
    if dtype.np_type in (np.float32, np.float64):
        values = _arange_as_pytorch(start, end, step, dtype.np_type)
    else:
        values = np.arange(start, end, step).astype(dtype.np_type)
    return _finish(values, None, requires_grad, device)


def _arange_as_pytorch(start, end, step, kind):
    """float32/float64 values as PyTorch's CPU kernel computes them, bit for bit.

    numpy adds a rounded step over and over; PyTorch computes ``start + step * i`` in double,
    fused (one rounding). Its AVX2 loop does that once per block of 8 float32 (4 float64)
    lanes, rounds the block's first value to the dtype, and adds ``k * step`` to it for the
    other lanes; it takes blocks in pairs and leaves the tail to the exact formula. So
    ``arange(-8.0, 8.0, 0.1)[80]`` is 4.4e-16 in PyTorch, not numpy's -2.8e-14. Long doubles
    stand in for the fused operation. (Sizes up to 32,768, where PyTorch uses one thread.)"""
    lanes = 32 // np.dtype(kind).itemsize
    i = np.arange(int(np.ceil((end - start) / step)))
    blocked = i < len(i) // (2 * lanes) * (2 * lanes)
    first = np.where(blocked, i // lanes * lanes, i)
    wide = np.longdouble
    base = (wide(start) + wide(step) * first.astype(wide)).astype(np.float64)
    base = np.where(blocked, base.astype(kind), base)
    lane = np.where(blocked, i - first, 0)
    return (wide(step) * lane.astype(wide) + base.astype(wide)).astype(np.float64).astype(kind)


@_dtype_argument
def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    """PyTorch's formula: the first half steps up from ``start``, the second half down from
    ``end``, each value a fused multiply-add rounded once to the result's type (so the middle
    of -1..1 in 7 steps is -2.98e-08, not 0). Long doubles stand in for the fused operation."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dtype = dtype or get_default_dtype()
    kind = np.dtype(dtype.np_type if dtype.is_floating_point else np.float64).type  # integers: a float64 step
    first, last = kind(start), kind(end)
    step = (last - first) / kind(max(steps - 1, 1))
    i, wide = np.arange(steps, dtype=np.longdouble), np.longdouble
    values = np.where(i < steps // 2, wide(first) + wide(step) * i, wide(last) - wide(step) * (steps - 1 - i))
    if steps == 1:
        values[0] = first
    return _finish(values.astype(dtype.np_type), None, requires_grad, device)


def _like(fn, t, dtype, device, requires_grad, *args):
    """``fn`` with ``t``'s shape, and its dtype and device unless given."""
    kwargs = dict(dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)
    return fn(*args, *t.shape, **kwargs) if args == () else fn(t.shape, *args, **kwargs)


def zeros_like(t, dtype=None, device=None, requires_grad=False):
    return _like(zeros, t, dtype, device, requires_grad)


def ones_like(t, dtype=None, device=None, requires_grad=False):
    return _like(ones, t, dtype, device, requires_grad)


def empty_like(t, dtype=None, device=None, requires_grad=False):
    return _like(empty, t, dtype, device, requires_grad)


def full_like(t, fill_value, dtype=None, device=None, requires_grad=False):
    return _like(full, t, dtype, device, requires_grad, fill_value)


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


@_dtype_argument
def randn(*size, dtype=None, device=None, requires_grad=False):
    dtype = _float_only(dtype, "normal_kernel_cpu")
    return _finish(_generator[0].standard_normal(_size(size, "randn"), dtype=np.float64).astype(dtype.np_type), None,
                   requires_grad, device)


@_dtype_argument
def rand(*size, dtype=None, device=None, requires_grad=False):
    dtype = _float_only(dtype, "check_uniform_bounds")
    return _finish(_generator[0].random(_size(size, "rand")).astype(dtype.np_type), None, requires_grad, device)


def _float_only(dtype, kernel):
    """Normal and uniform numbers come only in float dtypes; PyTorch's error names its kernel."""
    dtype = dtype or get_default_dtype()
    if not dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{dtype.scalar_name}\'')
    return dtype


@_dtype_argument
def randint(low, high=None, size=None, dtype=None, device=None, requires_grad=False):
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    size = _size((size,), "randint")
    return _finish(_generator[0].integers(low, high, size=size), dtype or _dtype.int64, requires_grad, device)


def randn_like(t, dtype=None, device=None, requires_grad=False):
    return _like(randn, t, dtype, device, requires_grad)


def rand_like(t, dtype=None, device=None, requires_grad=False):
    return _like(rand, t, dtype, device, requires_grad)


@_dtype_argument
def randperm(n, dtype=None, device=None):
    return _finish(_generator[0].permutation(n), dtype or _dtype.int64, False, device)
