"""``torch.FloatTensor`` and friends: the legacy typed constructors many tutorials still use.

In PyTorch they are not subclasses of Tensor: ``torch.FloatTensor(2, 3)`` returns a plain
``torch.Tensor`` of dtype float32, and ``isinstance(t, torch.FloatTensor)`` asks whether ``t`` is a
CPU tensor of that dtype. A metaclass gives both behaviours to classes that hold only a dtype.
"""
from . import _dtype
from .tensor import Tensor


class _LegacyTensorType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and not obj.is_cuda

    def __call__(cls, *args):
        """The legacy constructor (sizes, a sequence, a tensor or nothing) with this class's dtype."""
        from .creation import tensor
        data = args[0] if len(args) == 1 else None
        if isinstance(data, Tensor) and data.dtype is not cls.dtype:
            raise TypeError(f"expected {_options(cls.dtype)} (got {_options(data.dtype)})")
        if data is not None and not isinstance(data, (int, Tensor, _dtype.Size)) and hasattr(data, "__len__"):
            return tensor(data, dtype=cls.dtype)  # no detour through float32
        return Tensor(*args).to(cls.dtype)

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


def _options(dtype):
    return (f"TensorOptions(dtype={dtype.cpp_name}, device=cpu, layout=Strided, requires_grad=false (default), "
            "pinned_memory=false (default), memory_format=(nullopt))")


def _legacy_type(name, dtype):
    return _LegacyTensorType(name, (), {"dtype": dtype, "is_cuda": False, "__module__": "torch"})


FloatTensor = _legacy_type("FloatTensor", _dtype.float32)
DoubleTensor = _legacy_type("DoubleTensor", _dtype.float64)
HalfTensor = _legacy_type("HalfTensor", _dtype.float16)
ByteTensor = _legacy_type("ByteTensor", _dtype.uint8)
CharTensor = _legacy_type("CharTensor", _dtype.int8)
ShortTensor = _legacy_type("ShortTensor", _dtype.int16)
IntTensor = _legacy_type("IntTensor", _dtype.int32)
LongTensor = _legacy_type("LongTensor", _dtype.int64)
BoolTensor = _legacy_type("BoolTensor", _dtype.bool)
