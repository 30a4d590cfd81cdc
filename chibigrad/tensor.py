"""Tensor: a numpy array plus what autograd needs to know about it.

- ``requires_grad``: whether gradients should flow to this tensor;
- ``grad_fn``: the graph node that produced it (``None`` for leaves);
- ``grad``: where backward accumulates this leaf's gradient;
- a version counter, shared with views and ``detach()``, that every in-place
  change bumps so saved tensors can tell they were modified.

Math lives in ``chibigrad.ops``; the methods here only forward to it.
"""
import functools
import weakref
import warnings

import numpy as np

from . import memory
from ._dtype import Size, dtype as _dtype_cls, from_numpy_dtype
from . import _device
from .autograd import grad_mode
from .autograd.grad_mode import _state as _grad_state
from .autograd.node import AccumulateGrad, RemovableHandle

NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information. "
    "(Triggered internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)")


NO_GRAD_VIEW_INPLACE = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use "
    "case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if "
    "you want the inplace to be tracked).")


T_DEPRECATED = ("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
                "will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
                "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor. (Triggered "
                "internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4314.)")


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


def _rng(generator):
    """The numpy generator to draw from: the one given, or chibigrad's global one (``manual_seed``)."""
    from .creation import default_generator
    return generator or default_generator()


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
    _fw_grad = None  # forward mode: (level, tangent), see autograd/forward_ad.py
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
        _ops._util.wrap_dim(dim, len(shape))  # out of range: raises PyTorch's IndexError

    @property
    def dtype(self):
        return from_numpy_dtype(self._array.dtype)

    @property
    def device(self):
        return _device.device_of(self._array)

    @property
    def is_cuda(self):
        return type(self._array) is not np.ndarray

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
        from .autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # ---- conversion -------------------------------------------------------
    def item(self):
        if self._array.size != 1:
            raise RuntimeError(f"a Tensor with {self._array.size} elements cannot be converted to Scalar")
        return self._array.reshape(()).item()

    def tolist(self):
        return self._array.tolist()

    def numpy(self, force=False):
        if type(self._array) is not np.ndarray:
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to copy the "
                            "tensor to host memory first.")
        if self.requires_grad and not force and _grad_state.enabled:  # allowed where nothing is recorded
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                               "instead.")
        return self._array

    def __array__(self, dtype=None, copy=None):
        return self.numpy().astype(dtype, copy=False) if dtype is not None else self.numpy()

    def __float__(self):
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

    def __repr__(self):
        from ._tensor_str import tensor_repr
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

    def clone(self, memory_format=None):
        from .ops.pointwise import Clone
        return Clone.apply(self)

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
        return tuple(strides) if dim is None else strides[_ops._util.wrap_dim(dim, a.ndim)]

    def unflatten(self, dim, sizes):
        return _ops.unflatten(self, dim, sizes)

    def to(self, *args, **kwargs):
        """Change device and/or dtype (differentiable); returns self when nothing changes, as PyTorch."""
        from .ops.pointwise import ToCopy
        dev, dt = _parse_to(args, kwargs)
        if dev is not None:
            dev = _device.as_device(dev)
            if dev == self.device:
                dev = None
        if dt is self.dtype:
            dt = None
        if dt is None and dev is None:
            return self
        return ToCopy.apply(self, dt, dev)

    def cuda(self, device=None):
        """A copy on the GPU (``self`` if already there)."""
        return self.to("cuda" if device is None else device)

    def cpu(self):
        """A copy in host memory (``self`` if already there)."""
        return self.to(_device.cpu)

    def type(self, dtype=None):
        if dtype is None:
            return ("torch.cuda." if self.is_cuda else "torch.") + self.dtype.scalar_name + "Tensor"
        return self.to(dtype)

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
    def _check_inplace(self):
        """PyTorch's rules: a leaf that requires grad (or a view of one) may only
        be changed in place under no_grad, and an inference tensor only in inference mode."""
        if grad_mode.is_grad_enabled():
            base = self._base
            if base is not None and base.requires_grad and self.grad_fn is None:  # (made under no_grad)
                raise RuntimeError(NO_GRAD_VIEW_INPLACE)
            if self.grad_fn is None and self._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
            if base is not None and base.grad_fn is None and base._requires_grad:
                raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                                   "operation.")
        if any(stride == 0 and size > 1 for size, stride in zip(self._array.shape, self._array.strides)):  # (expand)
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                               "single memory location. Please clone() the tensor before performing the operation.")
        if self._is_inference and not grad_mode.is_inference_mode_enabled():
            raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed."
                               "You can make a clone to get a normal tensor before doing inplace update."
                               "See https://github.com/pytorch/rfcs/pull/17 for more details.")

    def _inplace(self, result):
        """Make ``self`` hold ``result``: new values, a bumped version and, if
        recorded, ``result``'s node as its grad_fn (history is rebased)."""
        self._check_inplace()
        arr = result._array
        if arr.dtype != self._array.dtype:
            arr = arr.astype(self._array.dtype)
        self._array[...] = arr
        self._bump_version()
        if self._fw_grad is not None or result._fw_grad is not None:  # forward mode: the new value's tangent
            _forward_ad.inplace(self, result)
        if result._grad_fn is not None:
            node, nr = result._grad_fn, result._output_nr
            self._grad_fn, self._output_nr = node, nr
            metas = node._output_meta  # a tuple: rebuilt with self's (shape, dtype, array type) at nr
            node._output_meta = metas[:nr] + (self._metadata(),) + metas[nr + 1:]
        return self

    def _recorded_inplace(self, op, *args, **kwargs):
        """Run the out-of-place ``op`` on a snapshot of self, then write the result back. On
        a view, the base's history is rewritten too (autograd/views.py)."""
        for a in args:  # (numpy would read values already overwritten, or copy them first: PyTorch refuses)
            if isinstance(a, Tensor) and _views.partial_overlap(self._array, a._array):
                raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to "
                                   "tensor refer to a single memory location. Please clone() the tensor before "
                                   "performing the operation.")
        if not (grad_mode.is_grad_enabled() and (self.requires_grad or any(
                isinstance(a, Tensor) and a.requires_grad for a in args))):
            return self._inplace(op(self, *args, **kwargs))
        self._check_inplace()  # a leaf that requires grad stops here, so self is a non-leaf or needs no grad
        if self._multi_output is not None:
            nr, name = self._multi_output
            raise RuntimeError(f"Output {nr} of {name} is a view and is being modified inplace. This view is the "
                               "output of a function that returns multiple views. Such functions do not allow the "
                               "output views to be modified inplace. You should replace the inplace operation by "
                               "an out-of-place one.")
        snapshot = wrap(self._array.copy())
        snapshot._grad_fn, snapshot._output_nr = self.grad_fn, self._output_nr
        snapshot._fw_grad = self._fw_grad
        result = op(snapshot, *args, **kwargs)
        self._inplace(result)
        if self._base is not None and result._grad_fn not in (None, snapshot._grad_fn):
            _views.rebase_history(self, result._grad_fn)
        return self

    def _check_result_fits(self, *others, true_divide=False, cpp_name=False):
        """An arithmetic in-place op may not give self values of a kind its dtype cannot hold
        (a float in an integer tensor, a number in a bool one): PyTorch refuses where copy_ converts."""
        result = _dtypes.result_type(self, *[wrap(o) if isinstance(o, np.ndarray) else o for o in others])
        if true_divide and not result.is_floating_point:
            result = _dtypes.float32
        if result.category > self.dtype.category:
            target = self.dtype.cpp_name if cpp_name else self.dtype.scalar_name
            raise RuntimeError(f"result type {result.scalar_name} can't be cast to the desired output type {target}")

    def add_(self, other, alpha=1):
        from .ops import add
        self._check_result_fits(other)
        return self._recorded_inplace(add, other, alpha=alpha)

    def sub_(self, other, alpha=1):
        from .ops import sub
        self._check_result_fits(other)
        return self._recorded_inplace(sub, other, alpha=alpha)

    def mul_(self, other):
        from .ops import mul
        self._check_result_fits(other)
        return self._recorded_inplace(mul, other)

    def div_(self, other):
        from .ops import div
        self._check_result_fits(other, true_divide=True)
        return self._recorded_inplace(div, other)

    def clamp_(self, min=None, max=None):
        from .ops import clamp
        self._check_result_fits(*[b for b in (min, max) if b is not None], cpp_name=True)
        return self._recorded_inplace(clamp, min, max)

    def copy_(self, src):
        from .ops.pointwise import Copy
        return self._recorded_inplace(Copy.apply, src)

    def fill_(self, value):
        from .ops.pointwise import Fill
        return self._recorded_inplace(Fill.apply, value)

    def zero_(self):
        from .ops.pointwise import Zero
        return self._recorded_inplace(Zero.apply, 0)

    # In-place random fills, as nn.init and tutorials call them; values from chibigrad's generator.
    def normal_(self, mean=0.0, std=1.0, generator=None):
        from .ops.pointwise import Normal
        return self._recorded_inplace(Normal.apply, lambda shape: _rng(generator).normal(mean, std, shape))

    def uniform_(self, from_=0.0, to=1.0, generator=None):  # PyTorch's `from` is a keyword in Python
        from .ops.pointwise import Uniform
        return self._recorded_inplace(Uniform.apply, lambda shape: _rng(generator).uniform(from_, to, shape))

    def bernoulli_(self, p=0.5, generator=None):
        from .ops.pointwise import Bernoulli
        return self._recorded_inplace(Bernoulli.apply, lambda shape: _rng(generator).random(shape) < p)

    def exponential_(self, lambd=1.0, generator=None):
        from .ops.pointwise import Exponential
        return self._recorded_inplace(Exponential.apply, lambda shape: _rng(generator).exponential(1 / lambd, shape))

    def _accumulate_(self, grad):
        """``self += grad`` for gradient accumulation (never recorded)."""
        self._array += grad._array
        self._bump_version()

    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    def __setitem__(self, index, value):
        from .ops.shape import IndexPut, is_basic
        key = _index_key(index, self._array)
        if is_basic(key):  # x[0], x[1:]: as PyTorch does, copy_ into the view (autograd/views.py)
            self[key].copy_(value if isinstance(value, Tensor) else wrap(_device.as_array(value)))
        else:  # x[mask], x[[0, 2]]: index_put_
            self._recorded_inplace(IndexPut.apply, key, value)


    # ---- operators and math (implemented in chibigrad.ops) -----------------
    def __add__(self, other):
        return _ops.add(self, other)

    __radd__ = __add__

    def __sub__(self, other):
        return _ops.sub(self, other)

    def __rsub__(self, other):
        return _ops.rsub(self, other)

    def __mul__(self, other):
        return _ops.mul(self, other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        return _ops.div(self, other)

    def __mod__(self, other):
        return _ops.remainder(self, other)

    def __rmod__(self, other):
        return _ops.remainder(other, self)

    def __rtruediv__(self, other):
        return _ops.rdiv(self, other)

    def __neg__(self):
        if self.dtype is _dtypes.bool:
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                               "to invert a mask, use the `~` or `logical_not()` operator instead.")
        return _ops.neg(self)

    def __pos__(self):
        return self

    def __pow__(self, exponent):
        return _ops.pow(self, exponent)

    def __rpow__(self, base):
        return _ops.rpow(self, base)

    def __matmul__(self, other):
        return _ops.matmul(self, other)

    def __rmatmul__(self, other):
        return _ops.matmul(_ops.operand(other, self), self)

    def __abs__(self):
        return _ops.abs(self)

    def __getitem__(self, key):
        return _ops.sh.index(self, _index_key(key, self._array))

    # comparisons and logic: results are bool tensors, never differentiable
    def _compare(self, other, fn):
        x, y = self._array, other._array if isinstance(other, Tensor) else other
        if isinstance(other, Tensor) and type(x) is not type(y):
            x, y = _ops._util.cpu_scalars(x, y)
        return wrap(fn(x, y))

    def __eq__(self, other):
        return self._compare(other, np.equal)

    def __ne__(self, other):
        return self._compare(other, np.not_equal)

    def __lt__(self, other):
        return self._compare(other, np.less)

    def __le__(self, other):
        return self._compare(other, np.less_equal)

    def __gt__(self, other):
        return self._compare(other, np.greater)

    def __ge__(self, other):
        return self._compare(other, np.greater_equal)

    def __and__(self, other):
        return self._compare(other, np.logical_and if self.dtype.name == "bool" else np.bitwise_and)

    def __or__(self, other):
        return self._compare(other, np.logical_or if self.dtype.name == "bool" else np.bitwise_or)

    def __invert__(self):
        return wrap(~self._array)

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__

    def logical_not(self):
        return wrap(np.logical_not(self._array))

    @numpy_names
    def all(self, dim=None):
        return wrap(self._array.all(axis=None if dim is None else _ops._util.wrap_dim(dim, self.ndim)))

    @numpy_names
    def any(self, dim=None):
        return wrap(self._array.any(axis=None if dim is None else _ops._util.wrap_dim(dim, self.ndim)))

    def nonzero(self, *, as_tuple=False):
        """The indices of the non-zero elements: one row per element (or, as_tuple, one tensor per dim)."""
        if as_tuple:
            return tuple(wrap(np.asarray(i, dtype=np.int64)) for i in self._array.nonzero())
        return wrap(np.argwhere(self._array).astype(np.int64, copy=False))

    def isnan(self):
        """Where the values are nan: a bool tensor, outside autograd (as every comparison)."""
        return wrap(np.isnan(self._array))

    def isinf(self):
        return wrap(np.isinf(self._array))

    def isfinite(self):
        """Neither nan nor infinite: the check a training loop makes on its loss before stepping."""
        return wrap(np.isfinite(self._array))

    def equal(self, other):
        return _ops.equal(self, other)

    def add(self, other, alpha=1):
        return _ops.add(self, other, alpha)

    def sub(self, other, alpha=1):
        return _ops.sub(self, other, alpha)

    def mul(self, other):
        return _ops.mul(self, other)

    def div(self, other):
        return _ops.div(self, other)

    def pow(self, exponent):
        return _ops.pow(self, exponent)

    def neg(self):
        return _ops.neg(self)

    def exp(self):
        return _ops.exp(self)

    def log(self):
        return _ops.log(self)

    def log2(self):
        return _ops.log2(self)

    def log10(self):
        return _ops.log10(self)

    def log1p(self):
        return _ops.log1p(self)

    def expm1(self):
        return _ops.expm1(self)

    def sqrt(self):
        return _ops.sqrt(self)

    def abs(self):
        return _ops.abs(self)

    def sin(self):
        return _ops.sin(self)

    def cos(self):
        return _ops.cos(self)

    def tanh(self):
        return _ops.tanh(self)

    def sigmoid(self):
        return _ops.sigmoid(self)

    def relu_(self):
        return self._recorded_inplace(_ops.relu)

    def relu(self):
        return _ops.relu(self)

    def round(self, decimals=0):
        return _ops.round(self, decimals=decimals)

    def remainder(self, other):
        return _ops.remainder(self, other)

    def fmod(self, other):
        return _ops.fmod(self, other)

    def floor(self):
        return _ops.floor(self)

    def sign(self):
        return _ops.sign(self)

    def reciprocal(self):
        return _ops.reciprocal(self)

    def clamp(self, min=None, max=None):
        return _ops.clamp(self, min, max)

    clip = clamp

    def maximum(self, other):
        return _ops.maximum(self, other)

    def minimum(self, other):
        return _ops.minimum(self, other)

    @numpy_names
    def sum(self, dim=None, keepdim=False, dtype=None):
        return _ops.sum(self, dim, keepdim, dtype)

    @numpy_names
    def mean(self, dim=None, keepdim=False):
        return _ops.mean(self, dim, keepdim)

    @numpy_names
    def max(self, dim=None, keepdim=False):
        return _ops.max(self, dim, keepdim)

    @numpy_names
    def min(self, dim=None, keepdim=False):
        return _ops.min(self, dim, keepdim)

    @numpy_names
    def amax(self, dim=(), keepdim=False):
        return _ops.amax(self, dim, keepdim)

    @numpy_names
    def amin(self, dim=(), keepdim=False):
        return _ops.amin(self, dim, keepdim)

    @numpy_names
    def prod(self, dim=None, keepdim=False):
        return _ops.prod(self, dim, keepdim)

    @numpy_names
    def norm(self, p="fro", dim=None, keepdim=False):
        return _ops.norm(self, p, dim, keepdim)

    @numpy_names
    def var(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        return _ops.var(self, dim, unbiased, keepdim, correction)

    @numpy_names
    def std(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        return _ops.std(self, dim, unbiased, keepdim, correction)

    @numpy_names
    def argmax(self, dim=None, keepdim=False):
        return _ops.argmax(self, dim, keepdim)

    @numpy_names
    def argmin(self, dim=None, keepdim=False):
        return _ops.argmin(self, dim, keepdim)

    @numpy_names
    def softmax(self, dim):
        return _ops.softmax(self, dim)

    @numpy_names
    def log_softmax(self, dim):
        return _ops.log_softmax(self, dim)

    @numpy_names
    def logsumexp(self, dim, keepdim=False):
        return _ops.logsumexp(self, dim, keepdim)

    def matmul(self, other):
        return _ops.matmul(self, other)

    def mm(self, other):
        return _ops.mm(self, other)

    def bmm(self, other):
        return _ops.bmm(self, other)

    def mv(self, vec):
        return _ops.mv(self, vec)

    def dot(self, other):
        return _ops.linalg.dot(self, other)

    def gather(self, dim, index):
        return _ops.gather(self, dim, index)

    def scatter(self, dim, index, src=None, value=None):
        return _ops.scatter(self, dim, index, src, value)

    def scatter_(self, dim, index, src=None, value=None):
        return self._recorded_inplace(_ops.scatter, dim, index, src, value)

    def scatter_add(self, dim, index, src):
        return _ops.scatter_add(self, dim, index, src)

    def scatter_add_(self, dim, index, src):
        return self._recorded_inplace(_ops.scatter_add, dim, index, src)

    def index_select(self, dim, index):
        return _ops.index_select(self, dim, index)

    def index_add(self, dim, index, source, alpha=1):
        return _ops.index_add(self, dim, index, source, alpha)

    def index_add_(self, dim, index, source, alpha=1):
        return self._recorded_inplace(_ops.index_add, dim, index, source, alpha)

    def sort(self, dim=-1, descending=False, stable=False):
        return _ops.sort(self, dim, descending, stable)

    def argsort(self, dim=-1, descending=False, stable=False):
        return _ops.argsort(self, dim, descending, stable)

    def topk(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002
        return _ops.topk(self, k, dim, largest, sorted)

    def reshape(self, *shape):
        return _ops.reshape(self, *shape)

    def view(self, *shape):
        return _ops.view(self, *shape)

    def view_as(self, other):
        return _ops.view(self, other.shape)

    def reshape_as(self, other):
        return _ops.reshape(self, other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        return _ops.flatten(self, start_dim, end_dim)

    @numpy_names
    def squeeze(self, dim=None):
        return _ops.squeeze(self, dim)

    @numpy_names
    def unsqueeze(self, dim):
        return _ops.unsqueeze(self, dim)

    def tril(self, diagonal=0):
        return _ops.tril(self, diagonal)

    def triu(self, diagonal=0):
        return _ops.triu(self, diagonal)

    def transpose(self, dim0, dim1):
        return _ops.transpose(self, dim0, dim1)

    def t(self):
        return _ops.t(self)

    def permute(self, *dims):
        return _ops.permute(self, *dims)

    def expand(self, *shape):
        return _ops.expand(self, *shape)

    def expand_as(self, other):
        return _ops.expand(self, other.shape)

    @property
    def T(self):
        if self.ndim != 2:  # PyTorch warns once per process (TORCH_WARN_ONCE)
            _ops._util.warn_once("Tensor.T is deprecated on 0-D tensors. This function is the identity in these "
                                 "cases. (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                                 "TensorShape.cpp:4321.)" if self.ndim == 0 else T_DEPRECATED)
        return _ops.permute(self, tuple(range(self.ndim))[::-1])

    @property
    def mT(self):
        return _ops.transpose(self, -2, -1)

    def split(self, split_size, dim=0):
        return _ops.split(self, split_size, dim)

    def chunk(self, chunks, dim=0):
        return _ops.chunk(self, chunks, dim)

    def unbind(self, dim=0):
        return _ops.unbind(self, dim)

    def masked_fill(self, mask, value):
        return _ops.where(mask, value, self)

    def sum_to_size(self, *shape):
        """Sum over broadcast dimensions so the result has ``shape``: how a
        gradient flows back to an input that was broadcast."""
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        if self.shape == shape:
            return self
        lead = self.ndim - len(shape)
        dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and self.shape[lead + i] != 1)
        return self.sum(dims, keepdim=True).view(shape) if dims else self.view(shape)

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


def _index_key(index, array):
    """Tensors inside an index become arrays (on ``array``'s device)."""
    if isinstance(index, tuple):
        return tuple(_index_array(i, array) if isinstance(i, Tensor) else i for i in index)
    return _index_array(index, array) if isinstance(index, Tensor) else index


def _index_array(index, array):
    """An index tensor's array; PyTorch moves indices from the CPU to the indexed tensor's device."""
    idx = index._array
    if type(idx) is not type(array):
        if type(idx) is not np.ndarray:
            raise RuntimeError(f"indices should be either on cpu or on the same device as the indexed tensor "
                               f"({_device.device_of(array)})")
        idx = _device.to_device(idx, _device.device_of(array))
    return idx


def _default_float():
    return _dtypes.get_default_dtype()


from . import _dtype as _dtypes  # noqa: E402
from . import ops as _ops  # noqa: E402
from .autograd import forward_ad as _forward_ad, views as _views  # noqa: E402
