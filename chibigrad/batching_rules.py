"""Batching rules: how each op runs on a whole batch at once inside vmap (chibigrad/batching.py).

A rule gets the op (its Function), its arguments with every batched one as its whole batch (the
batch dimension first: a sample of shape (3, 4) arrives as (B, 3, 4)), which of them are batched,
and the batch size. It calls the op on the batch and returns the result with the batch first. Most
rules are the same few lines for a family of ops:

- element-wise ops: line the batch dims up (a batched (B, 4) meets an unbatched (3, 4): make it
  (B, 1, 4)), call the op; broadcasting does the rest;
- ops with a ``dim``: call them with dim + 1 (the sample's dim 0 is the batch's dim 1);
- reductions over every dim: reduce over dims 1.. instead;
- products: matmul already treats leading dims as a batch.

An op missing here runs once per sample (batching.py's fallback) and warns, as PyTorch does; a rule
returns NotImplemented for a case it leaves to that loop (indices that differ per sample). The rules
marked as exercise regions are assignment 06c's: the student edition has them stubbed, and their ops
loop there (silently: the other exercises and the book still run, only slower).
"""
import numpy as np

from . import _device
from .nn import _functions as nnf
from .ops import linalg, pointwise, reduction, selection, shape
from .tensor import Tensor, wrap, wrap_dim

rules = {}


def rule(*ops):
    """Declare ``fn`` the batching rule of ``ops``."""
    def declare(fn):
        for op in ops:
            rules[op] = fn
        return fn
    return declare


def sample_ndim(x, batched):
    return x.ndim - 1 if batched else x.ndim


def shifted(dim, ndim):
    """A sample's ``dim`` (negative allowed) as the batch's dim."""
    return wrap_dim(dim, ndim) + 1


def with_batch(x, batched, size):
    """``x`` as a batch: repeated ``size`` times if it is not one (for ops that need every operand batched)."""
    if batched:
        return x
    if not isinstance(x, Tensor):  # an array (index arrays come as arrays)
        return _device.array_module(x).broadcast_to(x, (size, *x.shape))
    return x.unsqueeze(0).expand(size, *x.shape)


# ---- element-wise: line the batch dims up, then broadcasting does the rest ----

@rule(pointwise.Add, pointwise.Sub, pointwise.Rsub, pointwise.Mul, pointwise.Div, pointwise.Neg, pointwise.Pow,
      pointwise.MulScalar, pointwise.PowTensor, pointwise.RPow, pointwise.Exp, pointwise.Log, pointwise.Log2,
      pointwise.Log10, pointwise.Log1p, pointwise.Expm1, pointwise.Sqrt, pointwise.Abs, pointwise.Sin, pointwise.Cos,
      pointwise.Tanh, pointwise.Sigmoid, pointwise.Relu, pointwise.Clamp,
      pointwise.ClampTensor, pointwise.Where, pointwise.Maximum, pointwise.Minimum, pointwise.Hypot, pointwise.Round,
      pointwise.RoundDecimals, pointwise.Remainder, pointwise.RemainderScalar, pointwise.Fmod, pointwise.FmodScalar,
      pointwise.Floor, pointwise.Sign, pointwise.Reciprocal, pointwise.Clone, pointwise.ToCopy, pointwise.Compare,
      pointwise.Xlogy, pointwise.Erfinv, pointwise.Rsqrt, pointwise.DivScalar,
      nnf.Erf, nnf.Gelu, nnf.Silu, nnf.LeakyRelu, nnf.LeakyReluInplace)
def elementwise(op, args, batched, size):
    ndim = max(sample_ndim(a, b) for a, b in zip(args, batched) if isinstance(a, Tensor))
    lined_up = []
    for a, b in zip(args, batched):
        if b and a.ndim - 1 < ndim:  # (B, 4) against a sample of (3, 4): (B, 1, 4)
            a = a.reshape(a.shape[0], *[1] * (ndim - a.ndim + 1), *a.shape[1:])
        lined_up.append(a)
    return op.apply(*lined_up)


@rule(pointwise.ThresholdBackward, pointwise.Copy, pointwise.Fill, pointwise.Zero)
def same_shapes(op, args, batched, size):
    """Element-wise ops whose operands must have one shape (an in-place op's result has its target's): the
    unbatched ones repeated."""
    return op.apply(*[with_batch(a, b, size) for a, b in zip(args, batched)])


@rule(pointwise.Normal, pointwise.Uniform, pointwise.Bernoulli, pointwise.Exponential)
def random_fill(op, args, batched, size):
    """``x.normal_()`` on a batch: randomness='different' draws for every sample, 'same' once for all."""
    from .batching import _levels
    dst, draw = args
    if _levels[-1].randomness == "same":
        return op.apply(dst, lambda shape: np.broadcast_to(draw(shape[1:]), shape))
    return op.apply(dst, draw)


# ---- reductions and other ops along a dim: the sample's dim d is the batch's dim d + 1 ----

def _dims(dim, ndim):
    """A sample's dims (None: all of them) as the batch's."""
    if dim is None:
        return tuple(range(1, ndim + 1))
    if isinstance(dim, (tuple, list)):
        return tuple(shifted(d, ndim) for d in dim) if ndim else ()
    return (shifted(dim, ndim),) if ndim else ()


@rule(reduction.SumAll, reduction.SumDim)
def sum_rule(op, args, batched, size):
    # BEGIN EXERCISE 06c.sum_rule
    a, dim, keepdim, dtype = args
    return reduction.SumDim.apply(a, _dims(dim, a.ndim - 1), keepdim, dtype)
    # END EXERCISE


@rule(reduction.MeanAll, reduction.MeanDim)
def mean_rule(op, args, batched, size):
    a, dim, keepdim = args
    return reduction.MeanDim.apply(a, _dims(dim, a.ndim - 1), keepdim)


@rule(reduction.ProdAll, reduction.ProdDim)
def prod_rule(op, args, batched, size):
    a, dim, keepdim = args
    if dim is None:  # prod over every dim: flatten a sample first
        return reduction.ProdDim.apply(a.reshape(size, -1), 1, False)
    return reduction.ProdDim.apply(a, shifted(dim, a.ndim - 1) if a.ndim > 1 else 0, keepdim)


@rule(reduction.Amax, reduction.Amin)
def amax_rule(op, args, batched, size):
    a, dim, keepdim = args
    return op.apply(a, _dims(dim, a.ndim - 1), keepdim)


@rule(reduction.MaxAll, reduction.MinAll)
def max_all_rule(op, args, batched, size):
    amax = reduction.Amax if op is reduction.MaxAll else reduction.Amin
    return amax.apply(args[0], _dims(None, args[0].ndim - 1), False)


@rule(reduction.MaxDim, reduction.MinDim, reduction.Softmax, reduction.LogSoftmax, reduction.LogSumExp,
      shape.SqueezeDim, shape.SqueezeMatmul, shape.Unbind, selection.Sort, selection.Topk)
def one_dim(op, args, batched, size):
    """Ops whose second argument is one dim (a 0-d sample's dim 0 is the batch's dim 1 too)."""
    a, dim, *rest = args
    return op.apply(a, shifted(dim, max(a.ndim - 1, 1)), *rest)


@rule(reduction.ArgReduce)
def arg_reduce_rule(op, args, batched, size):
    a, fn, dim, keepdim = args
    if dim is None:  # over a whole sample: its elements in one row
        return op.apply(a.reshape(size, -1), fn, 1, False)
    if a.ndim == 1:  # a 0-d sample's only element
        return op.apply(a.unsqueeze(1), fn, 1, keepdim)
    return op.apply(a, fn, shifted(dim, a.ndim - 1), keepdim)


@rule(reduction.LogicalReduce)
def logical_reduce_rule(op, args, batched, size):
    a, fn, dim = args
    if dim is None:
        return op.apply(a.reshape(size, -1), fn, 1)
    return op.apply(a, fn, shifted(dim, max(a.ndim - 1, 1)))


@rule(reduction.Var, reduction.Std, reduction.Norm)
def spread_rule(op, args, batched, size):
    if op is reduction.Norm:
        a, p, dim, keepdim = args
        return op.apply(a, p, _dims(dim, a.ndim - 1), keepdim)
    a, dim, correction, keepdim = args
    return op.apply(a, _dims(dim, a.ndim - 1), correction, keepdim)


# ---- views and shapes ----

@rule(shape.View, shape.UnsafeView, shape.ReshapeAlias)
def view_rule(op, args, batched, size):
    a, new_shape = args
    return a.reshape(size, *new_shape)  # (a batch moved from another dim is not contiguous: reshape, not view)


@rule(shape.Squeeze)
def squeeze_rule(op, args, batched, size):
    a = args[0]
    return a.reshape(size, *[n for n in a.shape[1:] if n != 1])


@rule(shape.Unsqueeze)
def unsqueeze_rule(op, args, batched, size):
    a, dim = args
    return op.apply(a, shifted(dim, a.ndim))


@rule(shape.Transpose)
def transpose_rule(op, args, batched, size):
    a, dim0, dim1 = args
    ndim = max(a.ndim - 1, 1)
    return op.apply(a, shifted(dim0, ndim), shifted(dim1, ndim))


@rule(shape.Diagonal)
def diagonal_rule(op, args, batched, size):
    a, offset, dim1, dim2 = args
    return op.apply(a, offset, dim1 + 1, dim2 + 1)  # (the op was given dims already wrapped)


@rule(shape.DiagonalGrad)
def diagonal_grad_rule(op, args, batched, size):
    grad, input_shape, offset, dim1, dim2 = args
    return op.apply(grad, (size, *input_shape), offset, dim1 + 1, dim2 + 1)


@rule(shape.T)
def t_rule(op, args, batched, size):
    return shape.Transpose.apply(args[0], 1, 2)


@rule(shape.Permute)
def permute_rule(op, args, batched, size):
    a, axes = args
    return op.apply(a, (0, *[d + 1 for d in axes]))


@rule(shape.Expand)
def expand_rule(op, args, batched, size):
    a, sizes = args
    a = a.reshape(size, *[1] * (len(sizes) - a.ndim + 1), *a.shape[1:])
    return op.apply(a, (size, *sizes))


@rule(shape.Tril, shape.Triu)
def tril_rule(op, args, batched, size):
    return op.apply(*args)  # the last two dims, whatever comes before


@rule(shape.Split, shape.SplitWithSizes)
def split_rule(op, args, batched, size):
    a, sizes, dim = args
    return op.apply(a, sizes, shifted(dim, a.ndim - 1))


@rule(shape.Cat, shape.Stack)
def cat_rule(op, args, batched, size):
    dim, *tensors = args
    ndim = tensors[batched.index(True) - 1].ndim - 1 + (op is shape.Stack)
    tensors = [with_batch(t, b, size) for t, b in zip(tensors, batched[1:])]
    return op.apply(shifted(dim, ndim), *tensors)


def _batch_key(key):
    """An index key for one sample as a key for the batch, or None where the batch dim would move
    (numpy puts the dims of index arrays separated by a slice first)."""
    items = key if isinstance(key, tuple) else (key,)
    if not any(isinstance(k, list) or getattr(k, "ndim", 0) > 0 for k in items):
        return (slice(None), *items)  # basic indexing: every dim stays where it is
    advanced = [i for i, k in enumerate(items) if isinstance(k, (list, int, np.integer)) or hasattr(k, "ndim")]
    if advanced != list(range(advanced[0], advanced[-1] + 1)):  # (with arrays, integers are advanced too)
        return None
    return (slice(None), *items)


@rule(shape.Index, shape.Select, shape.Slice, shape.Alias, shape.Unsqueezing)
def index_rule(op, args, batched, size):
    a, key = args
    if batched[1] and any(getattr(k, "dtype", None) == bool for k in (key if isinstance(key, tuple) else (key,))):
        raise RuntimeError("vmap: We do not support batching operators that can support dynamic shape. Attempting "
                           "to batch over indexing with a boolean mask.")
    full = _batch_key(key)
    if batched[1] or full is None:  # indices that differ per sample: one sample at a time
        return NotImplemented
    return op.apply(a, full)


@rule(shape.IndexGrad)
def index_grad_rule(op, args, batched, size):
    grad, key, in_shape = args
    full = _batch_key(key)
    if batched[1] or full is None:
        return NotImplemented
    return op.apply(grad, full, (size, *in_shape))


@rule(shape.IndexPut)
def index_put_rule(op, args, batched, size):
    dst, key, value = args
    full = _batch_key(key)
    if batched[1] or full is None:
        return NotImplemented
    if batched[2]:  # a value per sample, lined up with the picked elements of a sample
        picked = dst[0][key].ndim if batched[0] else dst[key].ndim
        value = value.reshape(size, *[1] * (picked - value.ndim + 1), *value.shape[1:])
    return op.apply(with_batch(dst, batched[0], size), full, value)


# ---- products: matmul treats leading dims as a batch ----

@rule(linalg.Mm, linalg.Bmm)
def mm_rule(op, args, batched, size):
    # BEGIN EXERCISE 06c.mm_rule
    a, b = args
    if op is linalg.Mm and all(batched):  # a matrix per sample on both sides: bmm (matmul would copy them)
        return linalg.bmm(a, b)
    return linalg.matmul(a, b)  # one side a batch: folded into one mm
    # END EXERCISE


@rule(linalg.Mv)
def mv_rule(op, args, batched, size):
    m, v = args
    if batched[1]:  # (B, k) vectors: (B, 1, k) @ m^T, or each matrix with its own vector
        return linalg.matmul(m, v.unsqueeze(-1)).squeeze(-1)
    return linalg.matmul(m, v)


@rule(linalg.Dot)
def dot_rule(op, args, batched, size):
    a, b = args
    return linalg.matmul(a.unsqueeze(-2), b.unsqueeze(-1) if b.ndim > 1 else b).reshape(size)


@rule(linalg.Addmm)
def addmm_rule(op, args, batched, size):
    bias, mat1, mat2 = args
    out = mm_rule(linalg.Mm, (mat1, mat2), batched[1:], size)
    if not batched[0]:
        return out + bias
    out_ndim = out.ndim - (batched[1] or batched[2])  # a sample's
    return out + bias.reshape(size, *[1] * (out_ndim - bias.ndim + 1), *bias.shape[1:])


# ---- selection along a dim ----

@rule(selection.Gather, selection.ScatterAdd, selection.Scatter, selection.ScatterValue)
def gather_rule(op, args, batched, size):
    a, dim, index, *rest = args
    ndim = max(sample_ndim(a, batched[0]), 1)
    rest = [with_batch(r, b, size) if hasattr(r, "ndim") else r for r, b in zip(rest, batched[3:])]
    return op.apply(with_batch(a, batched[0], size), shifted(dim, ndim), with_batch(index, batched[2], size), *rest)


@rule(selection.IndexSelect, selection.IndexAdd)
def index_select_rule(op, args, batched, size):
    # BEGIN EXERCISE 06c.index_select_rule
    a, dim, index, *rest = args
    if batched[2]:
        return NotImplemented
    ndim = max(sample_ndim(a, batched[0]), 1)
    rest = [with_batch(r, b, size) if isinstance(r, Tensor) else r for r, b in zip(rest, batched[3:])]
    return op.apply(with_batch(a, batched[0], size), shifted(dim, ndim), index, *rest)
    # END EXERCISE


@rule(selection.Nonzero)
def nonzero_rule(op, args, batched, size):
    raise RuntimeError("vmap: We do not support batching operators that can output dynamic shape. Attempted to vmap "
                       "over aten::nonzero. Please file an issue at https://github.com/pytorch/pytorch/issues if you "
                       "need this feature.")


# ---- nn: layers and losses ----

@rule(nnf.Embedding)
def embedding_rule(op, args, batched, size):
    weight, indices, padding_idx = args
    if batched[0]:
        return NotImplemented
    return op.apply(weight, indices, padding_idx)


@rule(nnf.NativeLayerNorm)
def layer_norm_rule(op, args, batched, size):
    x, weight, bias, k, eps = args
    if batched[1] or batched[2]:  # a weight per sample (an ensemble): normalise, then scale and shift
        y = op.apply(with_batch(x, batched[0], size), None, None, k, eps)
        pad = lambda t: t.reshape(size, *[1] * (y.ndim - t.ndim), *t.shape[1:]) if t.ndim < y.ndim else t  # noqa: E731
        return pad(with_batch(weight, batched[1], size)) * y + pad(with_batch(bias, batched[2], size))
    return op.apply(x, weight, bias, k, eps)


@rule(nnf.MseLoss, nnf.SmoothL1Loss, nnf.HuberLoss, nnf.BinaryCrossEntropy, nnf.BinaryCrossEntropyWithLogits)
def pointwise_loss_rule(op, args, batched, size):
    """Losses that are element-wise, then a mean or a sum: per element for the batch, then reduced per sample."""
    tensors = [i for i, a in enumerate(args) if hasattr(a, "ndim")]
    ndim = max(sample_ndim(args[i], batched[i]) for i in tensors)
    lined = [with_batch(a, b, size) if i in tensors[:2] else a for i, (a, b) in enumerate(zip(args, batched))]
    lined = [a.reshape(size, *[1] * (ndim - a.ndim + 1), *a.shape[1:]) if i in tensors[:2] and a.ndim <= ndim
             else a for i, a in enumerate(lined)]
    where = [i for i, a in enumerate(args) if isinstance(a, str)][0]  # the reduction
    reduction_ = args[where]
    lined[where] = "none"
    losses = op.apply(*lined)
    if reduction_ == "none":
        return losses
    per_sample = losses.reshape(size, -1)
    return per_sample.mean(1) if reduction_ == "mean" else per_sample.sum(1)


@rule(nnf.NllLoss)
def nll_rule(op, args, batched, size):
    """Every sample's rows as one batch of rows, losses per row, then each sample's mean or sum."""
    logp, target, weight, reduction_, ignore_index = args
    logp, target = with_batch(logp, batched[0], size), with_batch(target, batched[1], size)
    classes = logp.shape[-1]
    losses = op.apply(logp.reshape(-1, classes), target.reshape(-1), weight, "none", ignore_index)
    if reduction_ == "none":
        return losses.reshape(target.shape)
    per_sample = losses.reshape(size, -1).sum(1)
    if reduction_ == "sum":
        return per_sample
    xp = _device.array_module(target)
    t = target.reshape(size, -1)
    w = xp.ones(classes, dtype=losses._array.dtype) if weight is None else weight
    total = xp.where(t != ignore_index, w[xp.where(t != ignore_index, t, 0)], 0).sum(1)
    return per_sample / wrap(total.astype(losses._array.dtype))
