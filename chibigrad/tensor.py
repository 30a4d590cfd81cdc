"""Tensor: a numpy array plus what autograd needs to know about it.

- ``requires_grad``: whether gradients should flow to this tensor;
- ``grad_fn``: the graph node that produced it (``None`` for leaves);
- ``grad``: where backward accumulates this leaf's gradient;
- a version counter, shared with views and ``detach()``, that every in-place
  change bumps so saved tensors can tell they were modified.

The ops (``x * y``, ``x.sum()``, ``x.view(...)``, ``x.add_(y)``) are not written here: each op
module in ``chibigrad.ops`` declares its functions beside its Functions and attaches them to
Tensor as methods (``register``, see ``chibigrad/ops/__init__.py``).

Imports. The op modules and ``creation`` import this module, and it imports neither: the ops
attach their methods (above), and only the constructor and ``new_*`` import ``creation``, when
called. One cycle is real: a Tensor records into the graph (``grad_fn``, ``backward``, in-place
history) and the graph's modules (``autograd.node``, ``function``, ``engine``, ``views``,
``gradcheck``) make Tensors. This module imports ``autograd`` first, so those import it as a
module (``from .. import tensor as _tensor``) or inside the functions that need it, and use it
only when they run, once both exist; so does ``memory``, which every new tensor reports to.
"""
import functools
import weakref
import warnings

import numpy as np

from . import _device, _dtype as _dtypes, memory
from ._dtype import Size, dtype as _dtype_cls, from_numpy_dtype
from ._tensor_str import tensor_repr
from .autograd import backward as autograd_backward, forward_ad as _forward_ad, grad_mode, views as _views
from .autograd.grad_mode import _state as _grad_state
from .autograd.node import AccumulateGrad, RemovableHandle

NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information. "
    "(Triggered internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)")




def numpy_names(method):
    """Also accept numpy's ``axis`` and ``keepdims`` for ``dim`` and ``keepdim``, as PyTorch's
    argument parser does: ``x.sum(axis=1)`` works in PyTorch."""
    @functools.wraps(method)
    def accepting_numpy_names(*args, **kwargs):
        if kwargs:
            if "axis" in kwargs:
                kwargs["dim"] = kwargs.pop("axis")
            if "keepdims" in kwargs:
                kwargs["keepdim"] = kwargs.pop("keepdims")
        return method(*args, **kwargs)
    return accepting_numpy_names


def wrap_dim(dim, ndim):
    """``dim`` counted from the front (a negative one counts from the end), or PyTorch's
    IndexError: a wrong dim must fail, not wrap around to another one. A 0-d tensor
    accepts 0 and -1, as in PyTorch."""
    n = ndim or 1
    if -n <= dim < n:
        return dim if dim >= 0 else dim + n
    raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")


def wrap(array, requires_grad=False):
    """A new Tensor around ``array`` (no copy): the constructor ops use."""
    if type(array) is not np.ndarray:
        array = _device.as_array(array)  # numpy turns 0-d results into scalars; CUDA arrays stay
    t = object.__new__(Tensor)
    t._array = array
    if requires_grad:
        t._requires_grad = True
    if _grad_state.inference:
        t._is_inference = True
    if memory._counting:  # checked here too: every op wraps, and most runs never count
        memory.track(array)
    return t


class Tensor:
    """A multi-dimensional array that can record how it was computed."""

    # Defaults as class attributes: a new tensor only stores what differs.
    _requires_grad = False
    _grad_fn = None  # see the grad_fn property
    _output_nr = 0
    _grad = None
    _vc = None
    _retains_grad = False
    _backward_hooks = None
    _post_accumulate_hooks = None
    _grad_accumulator = None
    _fw_grad = None  # forward mode: {level: tangent}, see autograd/forward_ad.py
    _level = None  # inside vmap: the level of a BatchedTensor (chibigrad/batching.py)
    _is_inference = False
    _wrapped_number = False
    _base = None  # the tensor a view looks into
    _view_version = None  # a view: the version its grad_fn was made at (see grad_fn)
    _multi_output = None  # a piece of split/chunk/unbind: (output number, op name); PyTorch keeps it unchanged
    _shared_grad = False  # set by the engine on gradients others can also see
    _meta = None  # see _metadata
    __array_priority__ = 1000  # numpy defers to our operators: ndarray * Tensor -> Tensor

    def __init__(self, *args, requires_grad=False):
        """The legacy constructor: ``torch.Tensor([1, 2])`` holds data (as floats), ``torch.Tensor(2, 3)``
        is a float tensor of that shape (uninitialised in PyTorch; zeros here), ``torch.Tensor()`` is empty."""
        from .creation import tensor, zeros
        data = args[0] if len(args) == 1 else ()
        if args and (all(type(a) is int for a in args) or isinstance(data, Size)):
            t = zeros(*args, requires_grad=requires_grad)
        elif len(args) > 1:
            raise TypeError(f"new() received an invalid combination of arguments - got "
                            f"({', '.join(type(a).__name__ for a in args)})")
        elif isinstance(data, Tensor):  # PyTorch aliases it: the same data, no warning, no history
            t = data.detach().requires_grad_(requires_grad)
        elif isinstance(data, (float, bool, complex)):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        else:
            t = tensor(data, dtype=None if isinstance(data, (np.ndarray, Tensor)) else _default_float(),
                       requires_grad=requires_grad)
        self._array = t._array
        self._requires_grad = t._requires_grad

    # ---- attributes -------------------------------------------------------
    @property
    def shape(self):
        return Size(self._array.shape)

    def size(self, dim=None):
        shape = self._array.shape
        if dim is None:
            return Size(shape)
        if -len(shape) <= dim < len(shape):
            return shape[dim]
        if not shape:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        wrap_dim(dim, len(shape))  # out of range: raises PyTorch's IndexError

    @property
    def dtype(self):
        return from_numpy_dtype(self._array.dtype)

    @property
    def device(self):
        return _device.device_of(self._array)

    @property
    def is_cuda(self):
        return _device.device_of(self._array) is not _device.cpu  # by device: compile's traced arrays are host arrays

    @property
    def ndim(self):
        return self._array.ndim

    def dim(self):
        return self._array.ndim

    def numel(self):
        return self._array.size

    nelement = numel

    def element_size(self):
        return self._array.itemsize

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def __len__(self):
        if self._array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return len(self._array)

    @property
    def grad_fn(self):
        """The node that made this tensor, ``None`` for a leaf. A view whose base was changed
        in place since its grad_fn was made gets a new one first (autograd/views.py)."""
        if self._base is not None and self._vc[0] != self._view_version:
            _views.refresh(self)
        return self._grad_fn

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def requires_grad(self):
        return self._requires_grad or self.grad_fn is not None

    @requires_grad.setter
    def requires_grad(self, value):
        if self.grad_fn is not None:
            if not value:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use "
                                   "a computed variable in a subgraph that doesn't require differentiation use "
                                   "var_no_grad = var.detach().")
            return
        if value and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self._set_requires_grad(value)

    def _set_requires_grad(self, value):
        if value and self._is_inference and not grad_mode.is_inference_mode_enabled():
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not "
                               "allowed.")
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad=True):
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use "
                                   "a computed variable in a subgraph that doesn't require differentiation use "
                                   "var_no_grad = var.detach().")
            return self
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._set_requires_grad(requires_grad)
        return self

    @property
    def grad(self):
        if self._grad is None and not self._retains_grad and self.grad_fn is not None:
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value._array.shape != self._array.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                                   f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
                                   "the same size")
            if value._array.dtype != self._array.dtype:
                raise RuntimeError(f"attempting to assign a gradient with dtype '{value.dtype.cpp_name}' to a tensor "
                                   f"with grad_dtype '{self.dtype.scalar_name}'. The gradient must match the tensor's "
                                   "grad_dtype (defaults to the tensor's dtype). You can set the tensor's grad_dtype "
                                   "attribute with a specific dtype, or None to allow any dtype. Set grad_dtype with "
                                   "caution. Diverging the dtypes of a tensor and its gradient may break downstream "
                                   "systems that assume they match.")
        self._grad = value

    @property
    def retains_grad(self):
        return self._retains_grad

    def retain_grad(self):
        """Keep this non-leaf tensor's gradient in ``.grad`` during backward."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        node = self.grad_fn
        if node._retained is None:
            node._retained = {}
        node._retained[self._output_nr] = weakref.ref(self)
        self._retains_grad = True

    @property
    def _version_counter(self):
        """A one-element list shared by every tensor that aliases this data."""
        if self._vc is None:
            self._vc = [0]
        return self._vc

    @property
    def _version(self):
        return self._version_counter[0]

    def _bump_version(self):
        self._version_counter[0] += 1

    @property
    def output_nr(self):
        return self._output_nr

    def is_inference(self):
        return self._is_inference

    # ---- graph plumbing ---------------------------------------------------
    def _gradient_edge(self):
        """``(node, input_nr)`` a gradient for this tensor should go to."""
        node = self.grad_fn
        if node is not None:
            return (node, self._output_nr)
        if self._requires_grad:
            return (self._accumulator(), 0)
        return (None, 0)

    def _accumulator(self):
        """The leaf's AccumulateGrad node, shared by every graph that uses the leaf."""
        node = self._grad_accumulator and self._grad_accumulator()
        if node is None:
            node = AccumulateGrad(self)
            self._grad_accumulator = weakref.ref(node)
        return node

    def _metadata(self, like=None):
        """``(shape, numpy dtype, array type)``, what the engine checks this tensor's gradient
        against. Made once and shared by every node that records the tensor (fewer objects
        per op for the garbage collector to walk); ``data =`` starts it afresh. ``like`` (an
        input's, for an op's output) is shared in turn when it is equal."""
        meta = self._meta
        if meta is None:
            array = self._array
            meta = (array.shape, array.dtype, type(array))
            meta = self._meta = like if meta == like else meta
        return meta

    def _shallow_copy(self):
        """Another Tensor object over the same data and version counter, with no graph."""
        t = wrap(self._array)
        t._vc = self._version_counter
        return t

    def register_hook(self, hook):
        """``hook(grad)`` runs when this tensor's gradient is computed; it may return a replacement."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is None:
            if self._backward_hooks is None:
                self._backward_hooks = []
            hooks = self._backward_hooks
        else:
            node = self.grad_fn
            if node._tensor_hooks is None:
                node._tensor_hooks = {}
            hooks = node._tensor_hooks.setdefault(self._output_nr, [])
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs after a leaf's ``.grad`` has been updated."""
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_accumulate_hooks is None:
            self._post_accumulate_hooks = []
        self._post_accumulate_hooks.append(hook)
        return RemovableHandle(self._post_accumulate_hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad``."""
        autograd_backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # ---- conversion -------------------------------------------------------
    def item(self):
        if self._array.size != 1:
            raise RuntimeError(f"a Tensor with {self._array.size} elements cannot be converted to Scalar")
        return self._array.reshape(()).item()

    def tolist(self):
        return self._array.tolist()

    def numpy(self, force=False):
        if _device.device_of(self._array) is not _device.cpu:
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to copy the "
                            "tensor to host memory first.")
        if self.requires_grad and not force and _grad_state.enabled:  # allowed where nothing is recorded
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        return self._array

    def __array__(self, dtype=None, copy=None):
        return self.numpy().astype(dtype, copy=False) if dtype is not None else self.numpy()

    def __float__(self):
        if self.requires_grad and grad_mode.is_grad_enabled():  # float() only, not int() or item(); once
            from .ops._util import warn_once  # (ops imports this module)
            warn_once("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                      "Consider using tensor.detach() first. (Triggered internally at /__w/pytorch/pytorch/torch/"
                      "csrc/autograd/generated/python_variable_methods.cpp:822.)")
        return float(self._scalar())

    def __int__(self):
        return int(self._scalar())

    def _scalar(self):
        """The one element, for float() and int() (whose error differs from item()'s)."""
        if self._array.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __index__(self):
        if self.dtype.is_floating_point or self._array.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self):
        if self._array.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._array)

    def __iter__(self):
        if self._array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(len(self)))

    def __hash__(self):
        return id(self)

    def __pos__(self):
        return self

    def __repr__(self):
        grad_fn = type(self.grad_fn).__name__ if self.grad_fn is not None else None  # (name() may be longer)
        array, device = self._array, None
        if type(array) is not np.ndarray:  # the values are printed from a host copy
            array, device = _device.to_device(array, _device.cpu), str(self.device)
        tangent = _forward_ad.unpack_dual(self).tangent
        return tensor_repr(array, device=device, grad_fn=grad_fn, requires_grad=self._requires_grad and
                           self.grad_fn is None, tangent=None if tangent is None else f"{tangent}")

    __str__ = __repr__

    def __format__(self, spec):
        if self._array.ndim == 0:
            return format(self.item(), spec)
        return format(repr(self), spec)

    @property
    def data(self):
        """The same data outside the graph, with its own version counter (unlike detach)."""
        return wrap(self._array)

    @data.setter
    def data(self, value):
        self._array, self._meta = value._array, None

    def detach(self):
        """The same data, cut from the graph: shares storage and version counter."""
        return self._shallow_copy()

    def detach_(self):
        """Make this tensor a leaf that does not require grad (not a view: its base would still
        be in the graph, so PyTorch refuses)."""
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                               "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, "
                               "gradients are views of DDP buckets, and hence detach_() cannot be called on these "
                               "gradients. To fix this error, please refer to the Optimizer.zero_grad() function in "
                               "torch/optim/optimizer.py as the solution.")
        self._grad_fn = None
        self._requires_grad = False
        return self

    def contiguous(self, memory_format=None):
        return self if self._array.flags.c_contiguous else self.clone()

    def is_contiguous(self):
        return self._array.flags.c_contiguous

    def stride(self, dim=None):
        """How many elements (not bytes, as numpy counts) to step in memory for each dim.

        A contiguous tensor reports PyTorch's strides, ``prod(shape[i+1:])``: numpy may
        report something else for a dim of size 1, a step nobody ever takes."""
        a = self._array
        if a.flags.c_contiguous:
            strides, step = [], 1
            for n in reversed(a.shape):
                strides.insert(0, step)
                step *= max(n, 1)
        else:
            strides = [s // a.itemsize for s in a.strides]
        return tuple(strides) if dim is None else strides[wrap_dim(dim, a.ndim)]

    def cuda(self, device=None):
        """A copy on the GPU (``self`` if already there)."""
        return self.to("cuda" if device is None else device)

    def cpu(self):
        """A copy in host memory (``self`` if already there)."""
        return self.to(_device.cpu)

    def type(self, dtype=None):
        if dtype is None:
            return ("torch.cuda." if self.is_cuda else "torch.") + self.dtype.scalar_name + "Tensor"
        return self.to(getattr(dtype, "dtype", dtype))  # a dtype, or a legacy class such as torch.LongTensor

    def float(self):
        return self.to(_dtypes.float32)

    def double(self):
        return self.to(_dtypes.float64)

    def half(self):
        return self.to(_dtypes.float16)

    def long(self):
        return self.to(_dtypes.int64)

    def int(self):
        return self.to(_dtypes.int32)

    def bool(self):
        return self.to(_dtypes.bool)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        from .creation import zeros
        return zeros(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        from .creation import ones
        return ones(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        from .creation import tensor
        return tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    # ---- in-place ---------------------------------------------------------
    def _recorded_inplace(self, op, *args, **kwargs):
        """Run the out-of-place ``op`` and write its result into self (autograd/views.py)."""
        return _views.recorded_inplace(self, op, *args, **kwargs)

    def _accumulate_(self, grad):
        """``self += grad`` for gradient accumulation (never recorded)."""
        self._array += grad._array
        self._bump_version()

def _parse_to(args, kwargs):
    """``(device, dtype)`` from the arguments of ``.to()``; None where not given."""
    dev, dt = kwargs.get("device"), _dtypes.as_dtype(kwargs.get("dtype"), "to")
    for a in args:
        if isinstance(a, (_dtype_cls, type)):  # (a type: Python's float, int or bool, as PyTorch takes them)
            dt = _dtypes.as_dtype(a, "to")
        elif isinstance(a, Tensor):
            dev, dt = a.device, a.dtype
        elif isinstance(a, (str, int, _device.device)):
            dev = a
    return dev, dt


def _default_float():
    return _dtypes.get_default_dtype()
