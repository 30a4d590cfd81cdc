"""torch.testing: ``assert_close`` with PyTorch's default tolerances and messages.

Floating-point results are compared with a tolerance that depends on the
dtype (float32 cannot be held to float64's precision); integers and bools must
be equal. The message says how many elements differ and where the worst one is,
which is what a student needs to find the bug.
"""
import numpy as np

from . import _dtype
from .creation import tensor
from .tensor import Tensor

# (rtol, atol) by dtype, as torch.testing uses them
_TOLERANCES = {_dtype.float16: (1e-3, 1e-5), _dtype.float32: (1.3e-6, 1e-5), _dtype.float64: (1e-7, 1e-7)}


def assert_close(actual, expected, *, rtol=None, atol=None, equal_nan=False, check_device=True, check_dtype=True,
                 msg=None):
    """Raise AssertionError unless ``actual`` and ``expected`` match in shape, device, dtype and values."""
    actual, expected = _as_tensor(actual), _as_tensor(expected)
    if actual.shape != expected.shape:
        _fail(msg, f"The values for attribute 'shape' do not match: {actual.shape} != {expected.shape}.")
    if check_device and actual.device != expected.device:
        _fail(msg, f"The values for attribute 'device' do not match: {actual.device} != {expected.device}.")
    if check_dtype and actual.dtype is not expected.dtype:
        _fail(msg, f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}.")
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'}.")
    exact = actual.dtype not in _TOLERANCES
    if rtol is None:
        rtol, atol = _TOLERANCES.get(actual.dtype, (0.0, 0.0))
    a, e = actual.detach().cpu().numpy(), expected.detach().cpu().numpy()
    close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if not close.all():
        _fail(msg, _mismatch_message(a, e, ~close, None if exact else (rtol, atol)))


def _as_tensor(x):
    return x if isinstance(x, Tensor) else tensor(x)


def _fail(msg, default):
    raise AssertionError(msg if msg is not None else default)


def _mismatch_message(a, e, mismatched, tolerances):
    """PyTorch's report: how many elements differ, the greatest differences and where."""
    abs_diff = np.abs(a - e) if a.dtype != np.bool_ else (a != e).astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel_diff = abs_diff / np.abs(e)
    if rel_diff.dtype.kind != "f" or a.dtype.kind != "f":
        rel_diff = rel_diff.astype(np.float32)  # integers: PyTorch reports it in the default float
    count, total = int(mismatched.sum()), a.size
    lines = [f"Tensor-likes are not {'equal' if tolerances is None else 'close'}!", "",
             f"Mismatched elements: {count} / {total} ({100 * count / total:.1f}%)"]
    for name, diff, allowed in (("absolute", abs_diff, tolerances and tolerances[1]),
                                ("relative", rel_diff, tolerances and tolerances[0])):
        index = _worst(diff, mismatched)
        line = f"Greatest {name} difference: {diff[index].item()} at index {tuple(int(i) for i in index)}"
        lines.append(line + (f" (up to {allowed} allowed)" if tolerances is not None else ""))
    return "\n".join(lines)


def _worst(diff, mismatched):
    """Index of the largest difference among mismatched elements (a NaN counts as largest)."""
    candidates = np.where(mismatched, diff, -np.inf)
    nans = np.isnan(candidates)
    flat = np.argmax(nans) if nans.any() else np.argmax(candidates)
    return np.unravel_index(flat, diff.shape)
