"""Graph nodes: what ``grad_fn`` points at, and the saved tensors they keep.

A Node is one backward function. ``next_functions`` holds one edge
``(node, input_nr)`` per input of the forward operation: the node that will
receive the gradient for that input, or ``None`` when it needs none. (The
node stores its edges flat, as PyTorch does, and builds that tuple on demand.)
"""
import itertools
import re
import sys
import weakref

import numpy as np

from .. import memory
from . import grad_mode
from .._dtype import from_numpy_dtype
from .. import tensor as _tensor  # bound lazily: tensor.py imports this package
from . import anomaly_mode

_sequence = itertools.count()
# (pack_hook, unpack_hook) pairs, innermost last: autograd.graph.saved_tensors_hooks pushes and pops them
_saved_tensors_hooks = []

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")

REGISTER_FREED_MESSAGE = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the graph are "
    "freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through "
    "the graph a second time or if you need to access saved variables after calling backward.")


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` takes the hook out again."""

    def __init__(self, hooks, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self):
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class SavedTensor:
    """A tensor kept for backward, with the version it had when saved.

    ``release()`` drops the reference so the array can be freed; unpacking
    afterwards raises PyTorch's "backward through the graph a second time"
    error, and unpacking after an in-place change raises the version error.
    An output of the node itself is stored as its bare array (keeping the
    Tensor would make a reference cycle through grad_fn) and re-wrapped on unpack.
    """

    __slots__ = ("_data", "_tensor", "_version", "_saved_version", "_output_nr", "_requires_grad", "_freed_meta",
                 "_untrack", "_packed", "_unpack_hook", "_edge", "__weakref__")

    def __repr__(self):
        """``grad_fn._raw_saved_self`` prints as in PyTorch, whose saved tensors are C++ objects."""
        return f"<torch._C._autograd.SavedTensor object at {id(self):#x}>"

    def __init__(self, tensor, is_output):
        if tensor._is_inference:
            raise RuntimeError("Inference tensors cannot be saved for backward. Please do not use Tensors created "
                               "in inference mode in computation tracked by autograd. To work around this, you "
                               "can make a clone to get a normal tensor and use it in autograd, or use "
                               "`torch.no_grad()` instead of `torch.inference_mode()`.")
        vc = tensor._vc
        if vc is None:
            vc = tensor._vc = [0]
        self._version, self._saved_version, self._data = vc, vc[0], tensor._array
        if is_output:  # kept as its bare array; unpack re-wraps it with the node as grad_fn
            self._tensor, self._output_nr, self._requires_grad = None, tensor._output_nr, tensor._grad_fn is not None
        else:
            self._tensor = tensor
        self._untrack = None
        if memory._counting:  # (saves a call per saved tensor while nobody counts)
            self._count()

    def _count(self):
        """Count the saved data in ``chibigrad.memory`` until it is released or this SavedTensor dies."""
        memory.track_saved(self._data)
        self._untrack = weakref.finalize(self, memory.untrack_saved, self._data)
        self._untrack.atexit = False

    @property
    def is_released(self):
        return self._data is None

    def release(self):
        """Let go of the saved data (backward calls this unless retain_graph)."""
        data = self._data
        if data is not None:
            if self._untrack is not None:
                self._untrack()
            self._freed_meta = (data.shape, data.dtype, data.nbytes)  # for graph pictures
            self._data = self._tensor = None

    def unpack(self, node):
        """The saved tensor, checked to be neither freed nor modified in place."""
        if self._data is None:
            raise RuntimeError(FREED_MESSAGE)
        if self._version[0] != self._saved_version:
            raise RuntimeError(self._modified_message(node))
        if self._tensor is not None:
            return self._tensor
        out = _tensor.wrap(self._data)
        out._vc = self._version
        if self._requires_grad:
            out._grad_fn, out._output_nr = node, self._output_nr
        return out

    def register_hooks(self, pack_hook, unpack_hook):
        """Hooks for this one saved tensor (``saved_tensors_hooks`` sets them for every tensor saved in a
        block): ``pack_hook`` gets the saved data now, as a tensor outside the graph, and the node keeps
        only what it returns; backward gets the tensor back from ``unpack_hook``."""
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError("register_hooks(): incompatible function arguments. The following argument types are "
                            "supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: collections.abc.Callable, "
                            "arg1: collections.abc.Callable) -> None\n\nInvoked with: "
                            f"{self!r}, {pack_hook!r}, {unpack_hook!r}")
        if self._data is None:
            raise RuntimeError(REGISTER_FREED_MESSAGE)
        data = _tensor.wrap(self._data)
        data._vc = self._version  # shares the data: an in-place change shows through
        self._pack(data, pack_hook, unpack_hook)
        self.__class__ = PackedSavedTensor  # (same slots) from now on it is unpacked through the hook

    def _pack(self, tensor, pack_hook, unpack_hook):
        """Keep what ``pack_hook`` makes of ``tensor``, and only the edge its gradient takes."""
        with grad_mode.no_grad():
            self._packed = pack_hook(tensor)
        self._unpack_hook = unpack_hook
        if self._untrack is not None:
            self._untrack()
        self._edge = None if self._tensor is None else self._tensor._gradient_edge()
        self._freed_meta = (self._data.shape, self._data.dtype, self._data.nbytes)
        self._data = self._tensor = None

    def _modified_message(self, node):
        """PyTorch's text: names the tensor's current grad_fn without its ``Backward<N>`` suffix."""
        data = self._data
        cuda = "cuda." if type(data) is not np.ndarray else ""
        what = f"[torch.{cuda}{from_numpy_dtype(data.dtype).scalar_name}Tensor {list(data.shape)}]"
        producer = node if self._tensor is None else self._tensor.grad_fn
        if producer is not None:
            nr = self._output_nr if self._tensor is None else self._tensor._output_nr
            what += f", which is output {nr} of {_short_name(producer)},"
        hint = ("the backtrace further above shows the operation that failed to compute its gradient. The "
                "variable in question was changed in there or anywhere later. Good luck!"
                if anomaly_mode.is_anomaly_enabled()
                else "enable anomaly detection to find the operation that failed to compute its gradient, with "
                "torch.autograd.set_detect_anomaly(True, check_nan=False).")
        return ("one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: {what} is at version {self._version[0]}; expected version "
                f"{self._saved_version} instead. Hint: {hint}")


class PackedSavedTensor(SavedTensor):
    """A tensor saved inside ``autograd.graph.saved_tensors_hooks``: the node keeps only what
    ``pack_hook`` returned (the hook decides where the data lives: on the CPU, compressed, or
    recomputed later) and backward gets the tensor back from ``unpack_hook``. To put it back into
    the graph, unpack needs the edge its gradient takes, not the tensor. As in PyTorch, there is
    no version check: the hooks own the saved value."""

    __slots__ = ()

    def __init__(self, tensor, is_output):
        super().__init__(tensor, is_output)
        self._pack(tensor, *_saved_tensors_hooks[-1])

    def register_hooks(self, pack_hook, unpack_hook):
        if self._unpack_hook is None:
            raise RuntimeError(REGISTER_FREED_MESSAGE)
        raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only "
                           "one pair of hooks is allowed at a time.")

    @property
    def is_released(self):
        return self._unpack_hook is None

    def release(self):
        self._packed = self._unpack_hook = None

    def unpack(self, node):
        """What ``unpack_hook`` returns, as a tensor in the graph again: an output gets its node back,
        an input the edge its gradient took."""
        if self._unpack_hook is None:
            raise RuntimeError(FREED_MESSAGE)
        value = self._unpack_hook(self._packed)
        if not isinstance(value, _tensor.Tensor):
            raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(value).__name__}")
        out = _tensor.wrap(value._array)
        edge_node, nr = (node if self._requires_grad else None, self._output_nr) if self._edge is None else self._edge
        if isinstance(edge_node, AccumulateGrad):
            out._requires_grad, out._grad_accumulator = True, weakref.ref(edge_node)
        elif edge_node is not None:
            out._grad_fn, out._output_nr = edge_node, nr
        return out


def _short_name(node):
    """``MulBackward0`` -> ``Mul``, as PyTorch's in-place error prints node names."""
    return re.sub(r"Backward\d*$", "", node.name())


class Node:
    """One backward function in the graph.

    Subclasses implement ``apply(*grad_outputs)`` returning one gradient per
    entry of ``next_functions``. The engine calls nodes in an order where every
    node runs after all nodes that feed it a gradient.
    """

    # Class-level defaults keep node creation cheap: most nodes have no hooks.
    # The edges, flat: per input, the node its gradient goes to and which of that node's
    # outputs it is (a tuple of pairs would be three objects per node for the GC to scan).
    _next_nodes = ()
    _next_nrs = ()
    _saved = ()  # a SavedTensor (or None) per tensor given to save_for_backward
    _input_meta = ()  # (shape, numpy dtype, array type) of each forward input that needs a gradient
    _tensor_args = ()  # positions of the forward's tensor arguments
    _output_meta = (None,)  # (shape, dtype, array type) per output
    _pre_hooks = ()
    _post_hooks = ()
    _tensor_hooks = None  # output_nr -> list of tensor hooks
    _retained = None  # output_nr -> weakref of a tensor that retains its grad

    def __init__(self):
        self._sequence_nr = next(_sequence)

    @property
    def next_functions(self):
        """One edge ``(node, input_nr)`` per input of the forward operation, as PyTorch gives them."""
        return tuple(zip(self._next_nodes, self._next_nrs))

    @property
    def metadata(self):
        """A dict for anything attached to the node (anomaly mode keeps the forward stack here)."""
        return self.__dict__.setdefault("_metadata", {})

    def name(self):
        return type(self).__name__

    _repr_prefix = ""  # "torch.autograd.function." for a custom Function's node, as PyTorch prints it

    def __repr__(self):
        return f"<{self._repr_prefix}{type(self).__name__} object at {id(self):#x}>"

    def __call__(self, *grad_outputs):
        return self.apply(*grad_outputs)

    def apply(self, *grad_outputs):
        raise NotImplementedError(f"{self.name()} does not implement apply")

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node; may return new grad_inputs."""
        if not self._post_hooks:
            self._post_hooks = []
        self._post_hooks.append(fn)
        return RemovableHandle(self._post_hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; may return new grad_outputs."""
        if not self._pre_hooks:
            self._pre_hooks = []
        self._pre_hooks.append(fn)
        return RemovableHandle(self._pre_hooks, fn)

    def release_saved(self):
        """Free every saved tensor: the graph can no longer be differentiated through here."""
        for saved in self._saved:
            if saved is not None:
                saved.release()

    @property
    def saved_tensors_info(self):
        """``(shape, dtype, nbytes, released)`` for each saved tensor (as it was, if freed or packed by a hook),
        for graph pictures. chibigrad's own: PyTorch shows saved tensors as ``grad_fn._saved_<name>``."""
        metas = [(s._freed_meta if s._data is None else (s._data.shape, s._data.dtype, s._data.nbytes), s.is_released)
                 for s in self._saved if s is not None]
        return [(tuple(shape), from_numpy_dtype(dtype), nbytes, released) for (shape, dtype, nbytes), released in metas]


class AccumulateGrad(Node):
    """The node of a leaf tensor: adds the incoming gradient into ``variable.grad``.

    Gradients add up, they never overwrite: that is what makes gradient
    accumulation over micro-batches and parameters used twice work.
    """

    def __init__(self, variable):
        super().__init__()
        self.variable = variable
        self._sequence_nr = sys.maxsize  # runs as soon as it is ready, as in PyTorch

    def apply(self, grad):
        var = self.variable
        for hook in var._backward_hooks or ():
            new = hook(grad)
            if new is not None:
                grad = check_hook_result(hook, grad, new)
            grad._shared_grad = True  # the hook may have kept it
        if var.grad is None:
            var.grad = _copy_recorded(grad) if grad_mode._state.enabled else _owned(grad)
        elif grad_mode._state.enabled:
            var.grad = var.grad + grad  # create_graph: keep the graph of the sum
        else:
            var.grad._accumulate_(grad)
        for hook in var._post_accumulate_hooks or ():
            hook(var)
        return ()


def check_hook_result(hook, grad, new):
    """A tensor hook may replace a gradient, but not change its dtype or device (PyTorch's check)."""
    if new._array.dtype != grad._array.dtype or type(new._array) is not type(grad._array):
        raise RuntimeError(f"hook '{getattr(hook, '__name__', '<unknown>')}' has changed the type of value (was "
                           f"{grad.type()} got {new.type()})")
    return new


def _copy_recorded(grad):
    """create_graph: PyTorch stores a copy made with ``copy_`` (so ``.grad`` shows ``CopyBackwards``
    and keeps the gradient's graph behind it), never the very tensor others may hold."""
    return _tensor.wrap(grad._array.copy()).copy_(grad)


def _owned(grad):
    """``grad`` detached; copied unless it is a fresh array no one else can see.

    The same gradient object can reach two leaves (``a + b`` hands both the
    same tensor), belong to the caller (``backward(gradient=g)``) or to a
    hook; storing it uncopied would let ``a.grad.zero_()`` clear ``b.grad``
    too. The engine marks such gradients ``_shared_grad`` (PyTorch decides
    the same with reference counts); fresh ones are stored without a copy.
    """
    if grad._shared_grad or grad._array.base is not None:
        return _tensor.wrap(grad._array.copy())  # what grad.detach().clone() gives, without two op calls
    return grad if grad.grad_fn is None and not grad._requires_grad else grad.detach()
