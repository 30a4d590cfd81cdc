"""Convolution and pooling over 1 or 2 spatial dims, on numpy's sliding windows.

A convolution is a matrix product in disguise: ``sliding_window_view`` shows every patch of
the (padded) input that a kernel covers, without copying, and one ``einsum`` multiplies each
patch with each kernel. Backward reuses the windows: the weight's gradient is the patches
weighted by the output's gradient; the input's gradient puts each kernel element's share back
where its patch came from (one slice per kernel position). Backward runs on arrays, so these
nodes are differentiable once: with ``create_graph=True`` they refuse (PyTorch's go twice).
"""
import functools
import itertools
import math
import string

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..autograd import grad_mode
from ..autograd.function import Function
from ..tensor import wrap


def once_only(backward):
    """A backward on arrays gives gradients without history: refuse create_graph=True rather than
    return a gradient whose dependence on the inputs is silently missing."""
    @functools.wraps(backward)
    def checked(ctx, *grads):
        if grad_mode.is_grad_enabled():
            raise NotImplementedError(f"chibigrad's {ctx.name()} is differentiable once: create_graph=True "
                                      "(a gradient of a gradient) through convolution or pooling is not implemented")
        return backward(ctx, *grads)
    return checked


def _windows(x, kernel, stride, padding, dilation, pad_value=0.0):
    """The patches of ``x`` (N, C, *spatial): shape (N, C, *out, *kernel)."""
    spatial = len(kernel)
    pads = [(0, 0), (0, 0)] + [(p, p) for p in padding]
    x = np.pad(x, pads, constant_values=pad_value) if any(padding) else x
    span = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    axes = tuple(range(2, 2 + spatial))
    w = sliding_window_view(x, span, axis=axes)
    out_index = tuple(slice(None, None, s) for s in stride)
    kernel_index = tuple(slice(None, None, d) for d in dilation)
    return w[(slice(None), slice(None)) + out_index + kernel_index]


def _letters(n, start):
    return string.ascii_lowercase[start:start + n]


class Convolution(Function):
    """``conv1d``/``conv2d``: out[n, o, *p] = sum over c, *k of patch[n, c, *p, *k] * weight[o, c, *k] + bias[o]."""
    node_name = "ConvolutionBackward0"
    saved_names = ("input", "weight")
    saved_values = ("stride", "padding", "dilation", "groups", "transposed", "output_padding", "bias_sym_sizes_opt")

    @staticmethod
    def forward(ctx, input, weight, bias, stride, padding, dilation, groups):
        ctx.save_for_backward(input, weight)
        ctx.stride, ctx.padding, ctx.dilation, ctx.groups = stride, padding, dilation, groups
        ctx.transposed, ctx.output_padding = False, (0,) * len(stride)
        ctx.bias_sym_sizes_opt = None if bias is None else tuple(bias.shape)
        patches = _grouped(_windows(input._array, weight.shape[2:], stride, padding, dilation), groups)
        out = np.einsum(_conv_formula(len(stride)), patches, _grouped_weight(weight._array, groups))
        out = out.reshape(out.shape[0], -1, *out.shape[3:])
        if bias is not None:
            out = out + bias._array.reshape((-1,) + (1,) * len(stride))
        return wrap(np.ascontiguousarray(out, dtype=input._array.dtype))

    @staticmethod
    @once_only
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        g = grad._array
        grouped_grad = g.reshape(g.shape[0], ctx.groups, -1, *g.shape[2:])
        kernel = weight.shape[2:]
        grad_weight = grad_input = grad_bias = None
        if ctx.needs_input_grad[1]:
            patches = _grouped(_windows(input._array, kernel, ctx.stride, ctx.padding, ctx.dilation), ctx.groups)
            spatial = len(kernel)
            p, k = _letters(spatial, 0), _letters(spatial, 10)
            gw = np.einsum(f"NGC{p}{k},NGO{p}->GOC{k}", patches, grouped_grad)
            grad_weight = wrap(gw.reshape(weight.shape).astype(weight._array.dtype))
        if ctx.needs_input_grad[0]:
            grad_input = wrap(_input_grad(input._array, weight._array, grouped_grad, ctx))
        if ctx.needs_input_grad[2]:
            grad_bias = wrap(g.sum(axis=(0,) + tuple(range(2, g.ndim))))
        return grad_input, grad_weight, grad_bias, None, None, None, None


def _conv_formula(spatial):
    p, k = _letters(spatial, 0), _letters(spatial, 10)
    return f"NGC{p}{k},GOC{k}->NGO{p}"


def _grouped(patches, groups):
    """(N, C, ...) -> (N, groups, C / groups, ...)."""
    return patches.reshape(patches.shape[0], groups, -1, *patches.shape[2:])


def _grouped_weight(weight, groups):
    """(O, C / groups, *k) -> (groups, O / groups, C / groups, *k)."""
    return weight.reshape(groups, -1, *weight.shape[1:])


def _input_grad(x, weight, grouped_grad, ctx):
    """Each kernel position sends grad * weight back to the input elements its patches read."""
    spatial = len(ctx.stride)
    p, k = _letters(spatial, 0), _letters(spatial, 10)
    per_tap = np.einsum(f"NGO{p},GOC{k}->NGC{p}{k}", grouped_grad, _grouped_weight(weight, ctx.groups))
    per_tap = per_tap.reshape(x.shape[0], x.shape[1], *per_tap.shape[3:])
    padded = np.zeros((x.shape[0], x.shape[1]) + tuple(n + 2 * q for n, q in zip(x.shape[2:], ctx.padding)), x.dtype)
    out_shape = per_tap.shape[2:2 + spatial]
    for tap in itertools.product(*(range(n) for n in weight.shape[2:])):
        region = tuple(slice(t * d, t * d + s * (n - 1) + 1, s)
                       for t, d, s, n in zip(tap, ctx.dilation, ctx.stride, out_shape))
        padded[(slice(None), slice(None)) + region] += per_tap[(Ellipsis,) + tap]
    inner = tuple(slice(q, q + n) for q, n in zip(ctx.padding, x.shape[2:]))
    return padded[(slice(None), slice(None)) + inner]


class MaxPool(Function):
    """The largest element of each window; backward sends the gradient to where it was (``result1``, the indices)."""
    node_name = "MaxPool2DWithIndicesBackward0"
    saved_names = ("self", "result1")
    saved_values = ("kernel_size", "stride", "padding", "dilation", "ceil_mode")

    @staticmethod
    def forward(ctx, input, kernel_size, stride, padding, dilation):
        ctx.kernel_size, ctx.stride, ctx.padding, ctx.dilation, ctx.ceil_mode = (
            kernel_size, stride, padding, dilation, False)
        x = input._array
        patches = _windows(x, kernel_size, stride, padding, dilation, pad_value=-np.inf)
        flat = patches.reshape(patches.shape[:-len(kernel_size)] + (-1,))
        tap = flat.argmax(axis=-1)
        out = np.take_along_axis(flat, tap[..., None], axis=-1)[..., 0]
        indices = wrap(_flat_input_index(tap, x.shape[2:], kernel_size, stride, padding, dilation))
        ctx.save_for_backward(input, indices)
        ctx.mark_non_differentiable(indices)
        return wrap(np.ascontiguousarray(out)), indices

    @staticmethod
    @once_only
    def backward(ctx, grad, _):
        input, indices = ctx.saved_tensors
        n, c = input.shape[:2]
        flat = np.zeros((n, c, math.prod(input.shape[2:])), grad._array.dtype)
        g, idx = grad._array.reshape(n, c, -1), indices._array.reshape(n, c, -1)
        for i in range(n):  # overlapping windows may pick one element twice: add, never overwrite
            for j in range(c):
                flat[i, j] += np.bincount(idx[i, j], g[i, j], minlength=flat.shape[2]).astype(flat.dtype)
        return wrap(flat.reshape(input.shape)), None, None, None, None


def _flat_input_index(tap, spatial_shape, kernel, stride, padding, dilation):
    """PyTorch's indices: the position of each maximum in the flattened (unpadded) input plane."""
    taps = np.unravel_index(tap, kernel)
    out_positions = np.indices(tap.shape[2:])
    coords = [o * s + t * d - q for o, t, s, d, q in zip(out_positions, taps, stride, dilation, padding)]
    return np.ravel_multi_index(coords, spatial_shape).astype(np.int64)


class AvgPool(Function):
    """The mean of each window; padding counts as zeros (``count_include_pad=True``)."""
    node_name = "AvgPool2DBackward0"
    saved_names = ("self",)
    saved_values = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override")

    @staticmethod
    def forward(ctx, input, kernel_size, stride, padding):
        ctx.kernel_size, ctx.stride, ctx.padding = kernel_size, stride, padding
        ctx.ceil_mode, ctx.count_include_pad, ctx.divisor_override = False, True, None
        ctx.save_for_backward(input)
        patches = _windows(input._array, kernel_size, stride, padding, (1,) * len(kernel_size))
        axes = tuple(range(-len(kernel_size), 0))
        return wrap(np.ascontiguousarray(patches.mean(axis=axes, dtype=input._array.dtype)))

    @staticmethod
    @once_only
    def backward(ctx, grad):
        input, = ctx.saved_tensors
        share = grad._array / grad._array.dtype.type(math.prod(ctx.kernel_size))
        spatial = len(ctx.kernel_size)
        weight = np.ones((1, 1) + tuple(ctx.kernel_size), share.dtype)
        ctx_like = _Geometry(ctx.stride, ctx.padding, (1,) * spatial, 1)
        per_channel = share.reshape(-1, 1, 1, *share.shape[2:])
        planes = input._array.reshape(-1, 1, *input.shape[2:])
        return wrap(_input_grad(planes, weight, per_channel, ctx_like).reshape(input.shape)), None, None, None


class _Geometry:
    """The stride, padding, dilation and groups ``_input_grad`` reads from a convolution's ctx."""

    def __init__(self, stride, padding, dilation, groups):
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups


class AdaptiveAvgPool(Function):
    """Output cell (i, j) averages rows floor(i H / h) to ceil((i + 1) H / h), and the same for columns."""
    node_name = "AdaptiveAvgPool2DBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, input, output_size):
        ctx.save_for_backward(input)
        ctx.cells = list(_adaptive_cells(input.shape[-2:], output_size))
        x = input._array
        out = np.empty(x.shape[:-2] + tuple(output_size), x.dtype)
        for (i, j), (rows, cols) in ctx.cells:
            out[..., i, j] = x[..., rows, cols].mean(axis=(-2, -1))
        return wrap(out)

    @staticmethod
    @once_only
    def backward(ctx, grad):
        input, = ctx.saved_tensors
        g = grad._array
        out = np.zeros(input.shape, g.dtype)
        for (i, j), (rows, cols) in ctx.cells:
            count = (rows.stop - rows.start) * (cols.stop - cols.start)
            out[..., rows, cols] += (g[..., i, j] / g.dtype.type(count))[..., None, None]
        return wrap(out), None


def _adaptive_cells(in_size, out_size):
    for i, j in itertools.product(range(out_size[0]), range(out_size[1])):
        yield (i, j), tuple(slice(k * n // m, -(-(k + 1) * n // m)) for k, n, m in zip((i, j), in_size, out_size))
