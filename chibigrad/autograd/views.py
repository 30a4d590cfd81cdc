"""In-place changes and view history: PyTorch's rules, so that gradients stay right.

An in-place op (``x.add_(1)``, ``x[0] = 5``, a custom Function's ``mark_dirty``) runs
as its out-of-place op on a snapshot of ``x``, then writes the result back into
``x``, bumps ``x``'s version (so saved copies of the old value refuse to be used)
and makes the op's node ``x``'s grad_fn (``recorded_inplace``). Before that,
``check_inplace`` applies PyTorch's refusals (a leaf that requires grad, a view
made under no_grad, an expanded tensor, an inference tensor).

A view (``x[0]``, ``x[:, 1:]``, ``x.t()``, ``x.view(...)``) shares its base's
memory, so writing into the view changes the base too. Autograd must then
rewrite history on both sides:

1. The base gets a new grad_fn, ``CopySlices``: the gradient of the changed
   region goes through the in-place op's own backward (which sends the part
   for the old values back to the base's old history, the rest to the op's
   other inputs); the untouched region goes straight to the old history.
2. Every view of that base whose data changed behind its back gets a new
   grad_fn when it is next used: ``AsStridedBackward0``, which puts the
   view's gradient at the view's place in a zero gradient of the base. The
   version counter, shared by a base and all its views, tells a view that
   its base changed since its grad_fn was made.

Both nodes find "the view's place" from memory addresses: numpy can tell
where each element of a view lies in its base (``view_positions``).
"""
import numpy as np

from .. import _device
from .. import tensor as _tensor  # bound lazily: tensor.py imports this package
from . import forward_ad, grad_mode, transforms
from .engine import call_node
from .node import Node


NO_GRAD_VIEW_INPLACE = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use "
    "case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if "
    "you want the inplace to be tracked).")


def recorded_inplace(tensor, op, *args, **kwargs):
    """Run the out-of-place ``op`` on a snapshot of ``tensor``, then write the result back
    (``tensor.add_(b)`` is ``recorded_inplace(tensor, add, b)``). On a view, the base's
    history is rewritten too."""
    Tensor = _tensor.Tensor
    for a in args:  # (numpy would read values already overwritten, or copy them first: PyTorch refuses)
        if isinstance(a, Tensor) and partial_overlap(tensor._array, a._array):
            raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to "
                               "tensor refer to a single memory location. Please clone() the tensor before "
                               "performing the operation.")
    if not (grad_mode.is_grad_enabled() and (tensor.requires_grad or any(
            isinstance(a, Tensor) and a.requires_grad for a in args))):
        return write_result(tensor, _result(op, tensor, args, kwargs))
    check_inplace(tensor)  # a leaf that requires grad stops here, so tensor is a non-leaf or needs no grad
    if tensor._multi_output is not None:
        nr, name = tensor._multi_output
        raise RuntimeError(f"Output {nr} of {name} is a view and is being modified inplace. This view is the "
                           "output of a function that returns multiple views. Such functions do not allow the "
                           "output views to be modified inplace. You should replace the inplace operation by "
                           "an out-of-place one.")
    snapshot = _tensor.wrap(tensor._array.copy())
    snapshot._grad_fn, snapshot._output_nr = tensor.grad_fn, tensor._output_nr
    snapshot._fw_grad = tensor._fw_grad
    result = _result(op, snapshot, args, kwargs)
    write_result(tensor, result)
    if tensor._base is not None and result._grad_fn not in (None, snapshot._grad_fn):
        rebase_history(tensor, result._grad_fn)
    return tensor


def _result(op, tensor, args, kwargs):
    """The out-of-place op's result, which must fit in ``tensor``."""
    result = op(tensor, *args, **kwargs)
    if result._level is not None and tensor._level is None:  # vmap: a batch into one sample (chibigrad/batching.py)
        raise transforms.state.batching.inplace_error(op, tensor, result)
    return result


def check_inplace(tensor):
    """PyTorch's rules: a leaf that requires grad (or a view of one) may only be changed in
    place under no_grad, and an inference tensor only in inference mode."""
    if grad_mode.is_grad_enabled():
        base = tensor._base
        if base is not None and base.requires_grad and tensor.grad_fn is None:  # (made under no_grad)
            raise RuntimeError(NO_GRAD_VIEW_INPLACE)
        if tensor.grad_fn is None and tensor._requires_grad:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        if base is not None and base.grad_fn is None and base._requires_grad:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
    array = tensor._array
    if any(stride == 0 and size > 1 for size, stride in zip(array.shape, array.strides)):  # (expand)
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    if tensor._is_inference and not grad_mode.is_inference_mode_enabled():
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed."
                           "You can make a clone to get a normal tensor before doing inplace update."
                           "See https://github.com/pytorch/rfcs/pull/17 for more details.")


def write_result(tensor, result):
    """Make ``tensor`` hold ``result``: new values, a bumped version and, if recorded,
    ``result``'s node as its grad_fn (history is rebased)."""
    check_inplace(tensor)
    array = result._array
    if array.dtype != tensor._array.dtype:
        array = array.astype(tensor._array.dtype)
    tensor._array[...] = array
    tensor._bump_version()
    if tensor._fw_grad is not None or result._fw_grad is not None:  # forward mode: the new value's tangent
        forward_ad.inplace(tensor, result)
    if result._grad_fn is not None:
        node, nr = result._grad_fn, result._output_nr
        tensor._grad_fn, tensor._output_nr = node, nr
        metas = node._output_meta  # a tuple: rebuilt with tensor's (shape, dtype, array type) at nr
        node._output_meta = metas[:nr] + (tensor._metadata(),) + metas[nr + 1:]
    return tensor


def rebase_dirty_view(ctx, args, view):
    """A view that a custom Function's forward changed in place (mark_dirty): its base's
    history is rewritten around ctx, which reads ctx's first input as the view's old value."""
    if args[0] is not view:
        raise RuntimeError("chibigrad rewrites the history of a view changed in place by a custom Function only "
                           "when the view is the Function's first argument: pass it first, or clone() it first.")
    rebase_history(view, ctx)


NOT_IN_BASE = ("chibigrad could not find this view's elements in its base tensor (was the base's .data replaced?). "
               "Clone the view before changing it in place.")


def view_positions(view, base):
    """For each element of the array ``view`` (row-major), the row-major flat index of the
    element of ``base`` it shares memory with. Only shapes, strides and addresses are read,
    so this works for arrays on any device."""
    wanted = _offsets(view, (_address(view) - _address(base)) // base.itemsize).ravel()
    if not wanted.size:
        return wanted
    if base.flags.c_contiguous:  # the usual base: element i lies at offset i
        if wanted.min() < 0 or wanted.max() >= base.size:
            raise RuntimeError(NOT_IN_BASE)
        return wanted
    base_offsets = _offsets(base, 0).ravel()
    order = np.argsort(base_offsets)
    found = order[np.minimum(np.searchsorted(base_offsets[order], wanted), len(order) - 1)]
    if not np.array_equal(base_offsets[found], wanted):
        raise RuntimeError(NOT_IN_BASE)
    return found


def _offsets(array, start):
    """The memory offset, in elements, of each element of ``array`` (shape and strides only)."""
    offsets = np.array(start, dtype=np.int64)
    for size, stride in zip(array.shape, array.strides):
        offsets = np.add.outer(offsets, np.arange(size, dtype=np.int64) * (stride // array.itemsize))
    return offsets


def _address(array):
    """Where ``array``'s first element is in memory (numpy's pointer, or CuPy's)."""
    interface = getattr(array, "__array_interface__", None)
    return interface["data"][0] if interface is not None else array.data.ptr


def partial_overlap(a, b):
    """Whether arrays ``a`` and ``b`` share some memory but are not the same elements:
    PyTorch's test before an in-place op (it checks only arrays whose elements fill their
    memory range, like this one)."""
    if not (a.size and b.size and _dense(a) and _dense(b)):
        return False
    start_a, start_b = _address(a), _address(b)
    if (start_a, a.nbytes, a.strides) == (start_b, b.nbytes, b.strides):
        return False  # the same elements: x.mul_(x) is fine
    return start_a < start_b + b.nbytes and start_b < start_a + a.nbytes


def _dense(array):
    """Whether the elements fill a memory range without gaps or repeats (in any dim order)."""
    expected = array.itemsize
    for stride, size in sorted((stride, size) for size, stride in zip(array.shape, array.strides) if size != 1):
        if stride != expected:
            return False
        expected *= size
    return True


class _ViewNode(Node):
    """What both nodes know: where the view lies in its base."""

    def __init__(self, base, view):
        super().__init__()
        self.base_shape = base._array.shape
        self.view_shape = view._array.shape
        positions = view_positions(view._array, base._array)
        self.positions = _tensor.wrap(_device.to_device(positions, _device.device_of(base._array)))


class AsStridedBackward0(_ViewNode):
    """grad_fn of a view whose base changed in place: the view's gradient, put at the
    view's place in zeros shaped like the base, goes to the base's current history."""

    def __init__(self, base, view):
        super().__init__(base, view)
        node, nr = base._gradient_edge()
        self._next_nodes, self._next_nrs = (node,), (nr,)
        self._input_meta, self._tensor_args = (base._metadata(),), (0,)

    def apply(self, grad):
        result = grad.new_zeros(self.base_shape).reshape(-1)
        result[self.positions] = grad.reshape(-1)
        return result.reshape(self.base_shape)


class CopySlices(_ViewNode):
    """grad_fn of a base after an in-place op on one of its views.

    ``fn`` is the in-place op's node (its first input is the view's old
    value). Its backward gets the gradient of the view's region; what it
    returns for the old value goes back into that region, the rest to fn's
    other inputs. Edges: the base's old history, then fn's other inputs.
    """

    def __init__(self, base, view, fn):
        super().__init__(base, view)
        self.fn = fn  # not an edge: CopySlices stands in for fn in the graph and runs it
        node, nr = base._gradient_edge()
        self._next_nodes = (node,) + fn._next_nodes[1:]
        self._next_nrs = (nr,) + fn._next_nrs[1:]
        fn_metas = [fn._input_meta[i] for i in fn._tensor_args]
        self._input_meta = (base._metadata(),) + tuple(fn_metas[1:])
        self._tensor_args = tuple(range(len(self._input_meta)))

    def name(self):
        return "torch::autograd::CopySlices"  # PyTorch's name for it (in messages; reprs show the class name)

    @property
    def _saved(self):
        return self.fn._saved  # so that backward frees fn's saved tensors after this node

    def release_saved(self):
        self.fn.release_saved()

    def apply(self, grad):
        flat = grad.reshape(-1)
        grads = list(call_node(self.fn, [flat[self.positions].reshape(self.view_shape)]))
        old_value_grad = grads.pop(0)
        result = flat.clone()
        result[self.positions] = 0. if old_value_grad is None else old_value_grad.reshape(-1)
        return (result.reshape(self.base_shape), *grads)


def rebase_history(view, node):
    """After an in-place op recorded as ``node`` changed ``view``: the base's history
    goes through CopySlices, and the view's own grad_fn is made again from it."""
    base = view._base
    base._grad_fn, base._output_nr = CopySlices(base, view, node), 0
    refresh(view)


def refresh(view):
    """Give ``view`` an AsStridedBackward0 over its base's current history (no grad_fn
    when the base needs no gradient), and remember the version it was made at."""
    base = view._base
    view._view_version = view._vc[0]
    view._grad_fn = AsStridedBackward0(base, view) if base.requires_grad else None
    view._output_nr = 0
