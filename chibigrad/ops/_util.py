"""Small helpers shared by the op definitions."""
import sys
import warnings

import numpy as np

from .. import _device
from .._dtype import get_default_dtype, result_type
from ..tensor import Tensor, wrap, wrap_dim  # noqa: F401 - wrap_dim: Tensor.size needs it too

torch_functions = {}
"""``name -> function`` of every op function declared with ``register``: chibigrad's torch namespace."""


def register(*methods, torch=True):
    """Declare an op's function: it becomes each Tensor method named in ``methods`` (``x.mul(y)``,
    ``x * y``) and ``torch.<its name>`` (``torch=False``: none; a tuple: those names). How and why:
    the docstring of chibigrad/ops/__init__.py."""
    def declare(function):
        for name in methods:
            setattr(Tensor, name, function)
        for name in (function.__name__,) if torch is True else torch or ():
            torch_functions[name] = function
        return function
    return declare


def arrays(a, b):
    """Both operands' arrays for an element-wise op: shapes and devices checked, dtype promoted."""
    x, y = a._array, b._array
    if x.shape != y.shape:
        check_broadcast(x.shape, y.shape)
    if type(x) is not type(y):  # arrays of different devices
        return cpu_scalars(*promoted(a, b))
    return (x, y) if x.dtype == y.dtype else promoted(a, b)


def cpu_scalars(*arrays):
    """Arrays of one element-wise op that are on different devices: a 0-d CPU array
    joins a CUDA op as a scalar (as in PyTorch); a CPU array with dimensions is PyTorch's error.
    Host arrays of two types (chibigrad.compile's traced arrays and plain ones) are all CPU."""
    if all(isinstance(x, np.ndarray) and _device.device_of(x) is _device.cpu for x in arrays):
        return arrays
    if any(type(x) is np.ndarray and x.ndim > 0 for x in arrays):
        raise RuntimeError("Expected all tensors to be on the same device, but found at least two devices, cuda:0 "
                           "and cpu!")
    return tuple(x[()] if type(x) is np.ndarray else x for x in arrays)


def check_device(method, *named):
    """PyTorch's check for ops such as mm (``named``: (argument name, tensor) pairs):
    the first tensor's device is the op's, a later one elsewhere is named in the error."""
    first = None
    for name, t in named:
        if t is None:
            continue
        if first is None:
            first = t
        elif type(t._array) is not type(first._array):
            raise RuntimeError(f"Expected all tensors to be on the same device, but got {name} is on {t.device}, "
                               f"different from other tensors on {first.device} (when checking argument in method "
                               f"wrapper_CUDA_{method})")


def promoted(a, b):
    """Both operands' arrays in their promoted dtype (PyTorch's rules, not numpy's)."""
    x, y = a._array, b._array
    if x.dtype == y.dtype:
        return x, y
    dt = result_type(a, b).np_type
    return x.astype(dt, copy=False), y.astype(dt, copy=False)


def check_broadcast(shape_a, shape_b):
    """PyTorch's error for shapes that do not broadcast (numpy's would be a ValueError)."""
    ndim = max(len(shape_a), len(shape_b))
    for i in range(1, min(len(shape_a), len(shape_b)) + 1):
        sa, sb = shape_a[-i], shape_b[-i]
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                               f"non-singleton dimension {ndim - i}")


def float_array(t):
    """``t``'s array, as the default float type when it holds integers or bools."""
    return t._array if t.dtype.is_floating_point else t._array.astype(get_default_dtype().np_type)


def operand(value, like):
    """A Tensor for ``value``; a Python number becomes a zero-dim "wrapped number"
    that takes part in type promotion as a scalar, as in PyTorch."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        return wrap(value)
    array = np.asarray(value, dtype=result_type(like, value).np_type)
    if type(like._array) is not np.ndarray:  # made on like's device: backward may meet it there
        array = _device.to_device(array, _device.device_of(like._array))
    t = wrap(array)
    t._wrapped_number = True
    return t


def normalize_dims(dim, ndim):
    """``dim`` (None, an int or a tuple, negatives allowed) as a tuple of axes, each checked;
    () for a 0-d tensor, which has no axis to reduce."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):  # the usual case: one dim
        axis = wrap_dim(dim, ndim)
        return (axis,) if ndim else ()
    axes = []
    for d in dim if isinstance(dim, (tuple, list)) else (dim,):
        axis = wrap_dim(d, ndim)
        if axis in axes:
            raise RuntimeError(f"dim {axis} appears multiple times in the list of dims")
        axes.append(axis)
    return tuple(axes) if ndim else ()


def unsqueeze_dims(grad, dims, keepdim):
    """Put reduced dims back as size 1 so ``grad`` broadcasts over the input."""
    if keepdim or not dims:
        return grad
    shape = list(grad.shape)
    for d in sorted(dims):
        shape.insert(d, 1)
    return grad.reshape(shape)


def save_needed(ctx, a, b):
    """For products: a's gradient needs b and b's needs a, so save only those, b first.
    (Saving both regardless would keep memory alive that backward never reads.) b comes
    first because PyTorch saves them in that order: saved-tensor hooks see b packed, and
    unpacked, before a."""
    need_a, need_b = ctx.needs_input_grad[:2]
    ctx.save_for_backward(b if need_a else None, a if need_b else None)


def warn(message, category=UserWarning):
    """``warnings.warn`` pointing at the first line outside chibigrad, as PyTorch's C++
    warnings point at the Python line that called into torch."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith("chibigrad"):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def write_out(name, result, out):
    """``out=``: PyTorch's out variants write the result into an existing tensor and record no graph.

    A tensor of another shape is resized to the result's, with PyTorch's deprecation warning
    unless it was empty."""
    if out is None:
        return result
    if result.requires_grad:
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    if out.shape != result.shape:
        if out.numel():
            warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, which "
                 f"does not match the required output shape {list(result.shape)}. This behavior is deprecated, and "
                 "in a future PyTorch release outputs will not be resized unless they have zero elements. You can "
                 "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0). "
                 "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)")
        out._array = np.empty(result.shape, dtype=out._array.dtype)
    out._array[...] = result._array
    out._bump_version()  # an in-place change: saved tensors that hold out see it
    return out


_warned_once = set()


def warn_once(message, category=UserWarning):
    """``warn``, once per process for each message, as PyTorch's TORCH_WARN_ONCE."""
    if message not in _warned_once:
        _warned_once.add(message)
        warn(message, category)
