"""torch.device, and the array libraries behind the devices.

A tensor's device is the type of its array: a numpy ``ndarray`` lives on the
CPU, a CuPy ``ndarray`` on the GPU. Ops need no device code for most of their
work: numpy's functions (``np.exp``, ``np.where``, ``np.zeros_like``, ``@``)
hand a CuPy array to CuPy, which runs them on the GPU. Only arrays made from
nothing (``np.zeros(shape)``) must be made on the right device:
``array_module(x)`` gives the library that owns ``x``, as CuPy's
``get_array_module`` does.

Without a GPU, the environment variable ``CHIBIGRAD_SIMULATE_CUDA`` (read at
import) stands in a *simulated* CUDA device, so the device logic can be tested
on any machine: ``1`` always simulates, ``auto`` simulates only when CuPy sees
no GPU. Simulated "cuda" tensors hold ``SimulatedCudaArray``\\ s, numpy arrays
that refuse what CuPy's arrays refuse: meeting a plain numpy (host) array, numpy
functions and ufuncs CuPy does not have (``np.vectorize``/``np.frompyfunc``
ufuncs included), ``np.add.at`` with an index that is not an array. A device bug
then fails on every machine, not only on a GPU. ``index_add`` and ``library_erf``
are the two places where numpy and CuPy need different calls.
"""
import math
import os

import numpy as np

from ._cupy_api import CUPY_FUNCTIONS, CUPY_UFUNCS


# every device type PyTorch knows (its message for an unknown one lists them); chibigrad has two
_PYTORCH_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                         "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


class device:
    """A device name such as ``'cpu'`` or ``'cuda:0'``, printed as PyTorch prints it."""

    def __init__(self, type, index=None):  # noqa: A002 - PyTorch's name
        if isinstance(type, device):
            type, index = type.type, type.index
        if ":" in type:
            type, idx = type.split(":")
            index = int(idx)
        if type not in _PYTORCH_DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_PYTORCH_DEVICE_TYPES)} device type at start of device "
                               f"string: {type}")
        if type not in ("cpu", "cuda"):
            raise RuntimeError(f"chibigrad has no '{type}' device: only cpu and cuda")
        self.type, self.index = type, index

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


cpu = device("cpu")
cuda0 = device("cuda", 0)  # chibigrad drives one GPU: a CUDA tensor's device is always cuda:0
_default_device = [cpu]


def get_default_device():
    """Where factory functions (``torch.ones``, ``torch.tensor``, ``nn.Linear``'s weights) put new tensors."""
    return _default_device[0]


def set_default_device(dev):
    """Make factory functions create tensors on ``dev`` ("cpu", "cuda"; None restores the CPU).

    As in PyTorch, the device is only checked to exist when a tensor is made
    there, and ``torch.from_numpy`` still shares the array's (CPU) memory.
    """
    if isinstance(dev, int) and not isinstance(dev, bool):
        if cuda_backend() is None:
            raise RuntimeError("Cannot access accelerator device when none is available.")
        dev = device("cuda", dev)
    _default_device[0] = cpu if dev is None else device(dev)


# ---- the simulated CUDA device ----------------------------------------------------------
class SimulatedCudaArray(np.ndarray):
    """Data on the simulated GPU: a numpy array that refuses, as a CuPy array does, to meet
    a host array and numpy calls that CuPy does not implement."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if not _cupy_takes_ufunc(ufunc, method, inputs + tuple(kwargs.get("out", ()))):
            return NotImplemented  # numpy raises CuPy's TypeError: "operand type(s) all returned NotImplemented"
        return _on_device(getattr(ufunc, method)(*_host_views(inputs), **_host_views(kwargs)))

    def __array_function__(self, func, types, args, kwargs):
        if f"{func.__module__}.{func.__name__}" not in CUPY_FUNCTIONS:
            return NotImplemented  # numpy raises CuPy's TypeError: "no implementation found for 'numpy.…'"
        return _on_device(func(*_host_views(args), **_host_views(kwargs)))

    def __getitem__(self, key):
        return _on_device(super().__getitem__(key))  # x[0] of a vector: a 0-d array, not a scalar

    def __setitem__(self, key, value):
        super().__setitem__(key, _host_view(value))

    @property
    def base(self):
        """None for an array that owns its data, as for a fresh numpy array. (A simulated
        array is a view of a plain ndarray; one that nothing else sees is the owner.)"""
        base = np.ndarray.base.__get__(self)
        return None if type(base) is np.ndarray and base.base is None else base


def _cupy_takes_ufunc(ufunc, method, operands):
    """Whether a CuPy array accepts ``ufunc`` through numpy's protocol, by CuPy's rule: a ufunc
    CuPy also has (looked up by name: an ``np.vectorize`` ufunc, "erf (vectorized)", is not
    there), with arrays and scalars only: ``np.add.at(a, [0, 0, 1], b)`` is refused for its
    list, ``np.add(a, [1, 2])`` too. ``reduce`` comes from the simulated array's own methods
    (``x.sum()`` is ``np.add.reduce``); a CuPy array has its own."""
    return method in ("__call__", "reduce", "at") and ufunc.__name__ in CUPY_UFUNCS and all(
        isinstance(x, (np.ndarray, np.generic, int, float, complex, bool)) for x in operands)


def _host_view(x):
    """The plain ndarray under a simulated-device array; a host array is refused."""
    if type(x) is SimulatedCudaArray:
        return x.view(np.ndarray)
    if isinstance(x, np.ndarray):
        raise TypeError(f"Unsupported type {type(x)}: a host (CPU) array met an array on the simulated CUDA "
                        "device. Create arrays with np.zeros_like(x)/array_module(x) or move them first.")
    return x


def _host_views(obj):
    """_host_view through the lists, tuples and dicts numpy functions take."""
    if isinstance(obj, (list, tuple)):
        return type(obj)(_host_views(x) for x in obj)
    if isinstance(obj, dict):
        return {k: _host_views(v) for k, v in obj.items()}
    return _host_view(obj)


def _on_device(result):
    """Results of a simulated op back on the device; 0-d results stay arrays, as in CuPy."""
    if isinstance(result, (np.ndarray, np.generic)):
        return np.asarray(result).view(SimulatedCudaArray)
    if isinstance(result, (list, tuple)):
        return type(result)(_on_device(r) for r in result)
    return result


class _SimulatedModule:
    """numpy, with the arrays it creates on the simulated device (``xp.zeros``, ``xp.arange``);
    like CuPy, it has only the functions in CuPy's list."""

    def __getattr__(self, name):
        fn = getattr(np, name)
        if isinstance(fn, np.ufunc):
            return _SimulatedUfunc(fn)
        if isinstance(fn, type) or not callable(fn):
            return fn  # dtypes and constants: np.float32, np.pi
        if f"numpy.{name}" not in CUPY_FUNCTIONS:
            raise AttributeError(f"module 'cupy' has no attribute '{name}' (chibigrad._cupy_api lists the numpy "
                                 "functions checked to exist in CuPy)")
        return lambda *args, **kwargs: _on_device(fn(*_host_views(args), **_host_views(kwargs)))


class _SimulatedUfunc:
    """A ufunc of the simulated module: called, it dispatches on its (device) inputs; its ``at``
    is CuPy's ``cupy.add.at``, which takes any index a numpy array takes."""

    def __init__(self, ufunc):
        self._ufunc = ufunc

    def __call__(self, *args, **kwargs):
        return self._ufunc(*args, **kwargs)

    def at(self, a, indices, b=None):
        self._ufunc.at(_host_view(a), _host_views(indices), _host_view(b))


def _simulated_erf(x):
    """cupyx.scipy.special.erf on the simulated device: ``math.erf`` element by element."""
    return _on_device(np.frompyfunc(math.erf, 1, 1)(_host_view(x)).astype(x.dtype))


class _Simulated:
    """The simulated CUDA backend."""
    array_type = SimulatedCudaArray
    xp = _SimulatedModule()
    erf = staticmethod(_simulated_erf)
    name = "chibigrad simulated CUDA device"
    simulated = True
    device_count = 1

    @staticmethod
    def to_device(host):
        return np.array(host, copy=True).view(SimulatedCudaArray)

    @staticmethod
    def to_host(array):
        return np.array(array.view(np.ndarray), copy=True)

    @staticmethod
    def synchronize():
        pass


class _CuPy:
    """CUDA through CuPy."""
    simulated = False

    def __init__(self, cupy):
        import cupyx.scipy.special
        self.xp, self.array_type, self.erf = cupy, cupy.ndarray, cupyx.scipy.special.erf
        self.name = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        self.to_device, self.to_host = cupy.asarray, cupy.asnumpy
        self.synchronize = cupy.cuda.runtime.deviceSynchronize
        self.device_count = cupy.cuda.runtime.getDeviceCount()


def _find_cupy():
    """CuPy's backend if CuPy is installed and sees a GPU, else None."""
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return _CuPy(cupy)
    except Exception:  # not installed, no driver, no device: all mean "no CUDA"
        pass
    return None


SIMULATE = os.environ.get("CHIBIGRAD_SIMULATE_CUDA", "")
_cuda = []  # [backend or None], found on first use: importing CuPy takes a while


def cuda_backend():
    """The CUDA backend in use (CuPy or simulated), or None when there is no CUDA."""
    if not _cuda:
        backend = None if SIMULATE == "1" else _find_cupy()
        if backend is None and SIMULATE in ("1", "auto"):
            backend = _Simulated()
        _cuda.append(backend)
        if backend is not None:
            _DEVICES[backend.array_type], _MODULES[backend.array_type] = cuda0, backend.xp
            _ERF[backend.array_type] = backend.erf
    return _cuda[0]


_DEVICES = {np.ndarray: cpu}
_MODULES = {np.ndarray: np}
_ERF = {}  # the array library's own erf: numpy has none


def device_of(array):
    """The device an array lives on."""
    return _DEVICES[type(array)]


def device_of_type(array_type):
    return _DEVICES[array_type]


def zeros(shape, dtype, array_type):
    """Zeros in an array of ``array_type`` (on its device)."""
    return _MODULES[array_type].zeros(shape, dtype)


def array_module(array):
    """numpy for a host array, the CUDA backend's module (CuPy) for a device array."""
    return _MODULES[type(array)]


def index_add(out, key, values):
    """``out[key] += values`` where repeated indices add up (numpy's ``np.add.at``). CuPy refuses
    ``np.add.at`` through numpy unless every index is an array, so it is called on the array
    module: ``np.add.at`` on the CPU, ``cupy.add.at`` on the GPU."""
    array_module(out).add.at(out, key, values)


def library_erf(array):
    """The erf of ``array``'s own library (CuPy's ``cupyx.scipy.special.erf``), or None (numpy has none)."""
    return _ERF.get(type(array))


def as_device(value):
    """A ``device`` from a string, a device or an index (``.cuda(0)``), checked to exist."""
    d = device(value) if not isinstance(value, int) else device("cuda", value)
    if d.type == "cpu":
        return cpu
    if cuda_backend() is None:
        raise AssertionError("Torch not compiled with CUDA enabled")
    if d.index not in (None, 0):
        raise RuntimeError("CUDA error: invalid device ordinal")
    return cuda0


def to_device(array, dev):
    """``array`` on device ``dev`` (a ``device``): itself if already there, else a copy."""
    here = device_of(array)
    if here == dev:
        return array
    backend = cuda_backend()
    return backend.to_host(array) if dev.type == "cpu" else backend.to_device(array)


def as_array(value):
    """``value`` as an array: CUDA arrays as they are, numpy scalars as 0-d host arrays."""
    return value if type(value) in _DEVICES else np.asarray(value)
