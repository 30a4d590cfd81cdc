"""Printing tensors exactly the way PyTorch does.

This is a numpy port of PyTorch's ``torch/_tensor_str.py`` restricted to
dense CPU-style tensors of real dtypes, with its print options
(``torch.set_printoptions``).  The
structure mirrors the original so the two can be read side by side:

* ``_Formatter`` scans the values once and decides *how* every number is
  written (integer-looking floats, fixed point or scientific notation) and
  how wide each column is, so that all elements line up.
* ``_tensor_body`` walks the dimensions recursively, wrapping long rows at
  ``linewidth`` characters and eliding the middle of big tensors with ``...``.
* ``tensor_repr`` adds the ``tensor(`` prefix and the trailing keyword
  suffixes (``device=``, ``dtype=``, ``grad_fn=``, ``requires_grad=``).

Numbers are converted to Python ``float``/``int``/``bool`` before being
formatted, exactly as PyTorch does via ``.item()``/``.tolist()``; that is what
makes the digits identical (Python's float formatting, not numpy's).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import _dtype


@dataclasses.dataclass
class _PrintOptions:
    """PyTorch's ``PRINT_OPTS``: what ``torch.set_printoptions`` changes."""
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None  # None: chosen per tensor by _Formatter


PRINT_OPTS = _PrintOptions()
_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
             "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
             "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """``torch.set_printoptions``: a profile first, then each option given; as in PyTorch, an
    unknown profile changes nothing and ``sci_mode`` is always set (omitting it means automatic)."""
    for name, value in _PROFILES.get(profile, {}).items():
        setattr(PRINT_OPTS, name, value)
    given = dict(precision=precision, threshold=threshold, edgeitems=edgeitems, linewidth=linewidth)
    for name, value in given.items():
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """``torch._tensor_str.get_printoptions``: the current options as a dict."""
    return dataclasses.asdict(PRINT_OPTS)


def _default_float():
    """torch's default float dtype (``torch.set_default_dtype``), as a numpy dtype."""
    return _dtype.get_default_dtype().np_type


def _default_dtypes():
    """dtypes whose name is never printed for non-empty tensors: the default float
    dtype plus the dtypes that Python literals infer (int -> int64, bool)."""
    return (_default_float(), np.dtype(np.int64), np.dtype(np.bool_))

_TORCH_DTYPE_NAMES = {
    np.dtype(np.float16): "torch.float16",
    np.dtype(np.float32): "torch.float32",
    np.dtype(np.float64): "torch.float64",
    np.dtype(np.int8): "torch.int8",
    np.dtype(np.int16): "torch.int16",
    np.dtype(np.int32): "torch.int32",
    np.dtype(np.int64): "torch.int64",
    np.dtype(np.uint8): "torch.uint8",
    np.dtype(np.bool_): "torch.bool",
}


def torch_dtype_name(dtype) -> str:
    """Return the name torch prints for a dtype, e.g. ``torch.float64``."""
    return _TORCH_DTYPE_NAMES[np.dtype(dtype)]


class _Formatter:
    """Decides one common format (and column width) for all elements.

    Torch picks a single style per tensor so that columns align:
      * int_mode: every finite value is a whole number -> print ``3.``;
      * sci_mode: values span > 3 orders of magnitude, or are huge/tiny ->
        print ``1.0000e+10``;
      * otherwise fixed point with ``precision`` decimals.
    Only nonzero finite values take part in the decision, because 0, nan and
    inf look the same in every style. ``set_printoptions(sci_mode=...)`` overrides
    the choice.
    """

    def __init__(self, values: np.ndarray):
        self.floating = np.issubdtype(values.dtype, np.floating)
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not self.floating:
            # Integers and bools are simply printed with str(); only the
            # widest one matters for alignment.
            self.max_width = max([1] + [len(str(v)) for v in flat.tolist()])
            return
        finite = flat[np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:
            return  # only zeros / nan / inf: keep the defaults
        # Like torch, do the range test in float64 (float16 would overflow).
        magnitudes = np.abs(finite).astype(np.float64)
        lo, hi = magnitudes.min(), magnitudes.max()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        with np.errstate(over="ignore"):  # 1e300 / 1e-300 -> inf, as in torch
            self.sci_mode = bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
        if PRINT_OPTS.sci_mode is not None:
            self.sci_mode = PRINT_OPTS.sci_mode
        for v in finite.tolist():
            self.max_width = max(self.max_width, self._width_of(v))

    def _width_of(self, value: float) -> int:
        """Width of one value in the chosen style (int mode adds a '.')."""
        if self.sci_mode:
            return len(f"{value:.{PRINT_OPTS.precision}e}")
        if self.int_mode:
            return len(f"{value:.0f}") + 1
        return len(f"{value:.{PRINT_OPTS.precision}f}")

    def format(self, value) -> str:
        """Format one Python scalar, right-aligned to the common width."""
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if not (math.isinf(value) or math.isnan(value)):
                text += "."  # the dot is what marks the tensor as floating
        else:
            text = f"{value:.{PRINT_OPTS.precision}f}"
        return text.rjust(self.max_width)


def _summarized(values: np.ndarray) -> np.ndarray:
    """Keep only the elements that will actually be shown.

    Torch sizes the columns of a summarized tensor from the visible edge
    items only, so a huge hidden value does not widen every column.
    """
    index = []
    for n in values.shape:
        if n > 2 * PRINT_OPTS.edgeitems:
            index.append(list(range(PRINT_OPTS.edgeitems)) + list(range(n - PRINT_OPTS.edgeitems, n)))
        else:
            index.append(list(range(n)))
    return values[np.ix_(*index)] if values.ndim else values


def _vector_str(values: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    """Format a 1-D array, wrapping so no line exceeds ``linewidth``.

    Every element takes ``width + 2`` characters (", "); the number that fit
    after the indentation is computed once, so all rows hold the same count.
    """
    per_line = max(1, (PRINT_OPTS.linewidth - indent) // (fmt.max_width + 2))
    if summarize and len(values) > 2 * PRINT_OPTS.edgeitems:
        items = (
            [fmt.format(v) for v in values[:PRINT_OPTS.edgeitems].tolist()]
            + [" ..."]
            + [fmt.format(v) for v in values[-PRINT_OPTS.edgeitems:].tolist()]
        )
    else:
        items = [fmt.format(v) for v in values.tolist()]
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_body(values: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    """Recursively format an n-d array; each nesting level indents by one.

    Sub-blocks of a d-dimensional tensor are separated by d-1 newlines, which
    is why matrices of a 3-d tensor are split by a blank line.
    """
    if values.ndim == 0:
        return fmt.format(values.item())
    if values.ndim == 1:
        return _vector_str(values, indent, summarize, fmt)
    n = values.shape[0]
    if summarize and n > 2 * PRINT_OPTS.edgeitems:
        rows = list(range(PRINT_OPTS.edgeitems)) + [None] + list(range(n - PRINT_OPTS.edgeitems, n))
    else:
        rows = list(range(n))
    blocks = [
        "..." if i is None else _tensor_body(values[i], indent + 1, summarize, fmt)
        for i in rows
    ]
    separator = "," + "\n" * (values.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(blocks) + "]"


def _tensor_str(values: np.ndarray, indent: int) -> str:
    """Format the data part (between ``tensor(`` and the suffixes)."""
    if values.size == 0:
        return "[]"
    summarize = values.size > PRINT_OPTS.threshold
    fmt = _Formatter(_summarized(values) if summarize else values)
    return _tensor_body(values, indent, summarize, fmt)


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """Append ``, key=value`` suffixes, moving one to a new line if it
    would push the last line past ``linewidth``.

    ``last_line_len`` reproduces torch's arithmetic exactly, including its
    off-by-two when the text has no newline (rfind returns -1).
    """
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(
    array: np.ndarray,
    *,
    device: str | None = None,
    grad_fn: str | None = None,
    requires_grad: bool = False,
    tangent: str | None = None,
) -> str:
    """Return what ``repr(t)`` prints in PyTorch for a tensor holding ``array``.

    ``device`` is printed only when it is not the CPU (pass torch's spelling,
    e.g. ``'cuda:0'``).  ``grad_fn`` is the node class name such as
    ``"MulBackward0"``; when it is given, ``requires_grad=True`` is implied and
    torch does not print it. ``tangent`` is a dual tensor's tangent (forward mode), as text.
    """
    values = np.asarray(array)
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if device is not None and device != "cpu":
        suffixes.append(f"device='{device}'")
    if values.size == 0:
        # No elements to infer anything from: show shape (unless plain 1-d)
        # and any dtype that is not the default float.
        if values.ndim != 1:
            suffixes.append(f"size={tuple(values.shape)}")
        if values.dtype != _default_float():
            suffixes.append(f"dtype={torch_dtype_name(values.dtype)}")
    elif values.dtype not in _default_dtypes():
        suffixes.append(f"dtype={torch_dtype_name(values.dtype)}")
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    if tangent is not None:
        suffixes.append(f"tangent={tangent}")
    return _add_suffixes(prefix + _tensor_str(values, indent), suffixes, indent)
