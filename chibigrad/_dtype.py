"""dtypes, torch.Size and PyTorch's type-promotion rules on top of numpy."""
import builtins

import numpy as np


class dtype:
    """A tensor element type, printed as PyTorch prints it (``torch.float32``)."""

    def __init__(self, name, np_type, category, scalar_name, cpp_name):
        self.name = name
        self.scalar_name, self.cpp_name = scalar_name, cpp_name  # how PyTorch's messages name it: Float, float
        self.np_type = np.dtype(np_type)
        self.category = category  # 0 bool, 1 integer, 2 floating point
        self.is_floating_point = category == 2
        self.itemsize = self.np_type.itemsize

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name


bool = dtype("bool", np.bool_, 0, "Bool", "bool")  # noqa: A001 - PyTorch's name
uint8 = dtype("uint8", np.uint8, 1, "Byte", "unsigned char")
int8 = dtype("int8", np.int8, 1, "Char", "signed char")
int16 = dtype("int16", np.int16, 1, "Short", "short int")
int32 = dtype("int32", np.int32, 1, "Int", "int")
int64 = dtype("int64", np.int64, 1, "Long", "long int")
float16 = dtype("float16", np.float16, 2, "Half", "c10::Half")
float32 = dtype("float32", np.float32, 2, "Float", "float")
float64 = dtype("float64", np.float64, 2, "Double", "double")
long, int, half, float, double = int64, int32, float16, float32, float64  # noqa: A001

_BY_NUMPY = {d.np_type: d for d in (bool, uint8, int8, int16, int32, int64, float16, float32, float64)}
_DEFAULT_FOR_CATEGORY = {0: bool, 1: int64, 2: float32}


def from_numpy_dtype(np_type):
    """The chibigrad dtype of a numpy dtype; float32 stands in for any other float."""
    try:
        return _BY_NUMPY[np.dtype(np_type)]
    except KeyError:
        raise TypeError(f"can't convert np.ndarray of type {np.dtype(np_type)}. The only supported "
                        "types are: float64, float32, float16, int64, int32, int16, int8, uint8, and bool.") from None


_PYTHON_TYPES = {builtins.float: float64, builtins.int: int64, builtins.bool: bool}


def as_dtype(value, fn_name):
    """A ``dtype=`` argument as a dtype: PyTorch also takes Python's float, int and bool."""
    if value is None or isinstance(value, dtype):
        return value
    if isinstance(value, type) and value in _PYTHON_TYPES:
        return _PYTHON_TYPES[value]
    raise TypeError(f"{fn_name}(): argument 'dtype' must be torch.dtype, not {type(value).__name__}")


def get_default_dtype():
    """The dtype of float tensors made from Python numbers (float32 unless changed)."""
    return _DEFAULT_FOR_CATEGORY[2]


def set_default_dtype(d):
    """Make ``d`` the dtype of new float tensors: ``torch.tensor(1.5)``, ``torch.ones(2)``,
    ``nn.Linear``'s weights, and an int tensor times a Python float. float64 is the usual
    choice, for gradcheck-grade precision everywhere; only float types are allowed."""
    if not isinstance(d, dtype):
        raise TypeError("invalid dtype object: only floating-point types are supported as the default type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _DEFAULT_FOR_CATEGORY[2] = d


def scalar_category(value):
    """0 for bool, 1 for int, 2 for float: the category of a Python number."""
    if isinstance(value, (builtins.bool, np.bool_)):
        return 0
    if isinstance(value, (builtins.int, np.integer)):
        return 1
    return 2



def result_type(*operands):
    """PyTorch's promotion: the highest category wins; within it, tensors with
    dimensions outrank zero-dim tensors, which outrank Python numbers.

    ``operands`` are Tensors or Python numbers. For example an int64 tensor
    times 2.5 is float32 (the default float), and float32 + float64 zero-dim
    tensor stays float32.
    """
    best = [None, None, None]  # per priority level: dims>0, zero-dim, scalar
    for op in operands:
        if hasattr(op, "dtype") and not isinstance(op, np.generic):  # numpy scalars promote like Python numbers
            level, dt = (0 if op.ndim else 1), op.dtype
        else:
            level, dt = 2, _DEFAULT_FOR_CATEGORY[scalar_category(op)]
        cur = best[level]
        if cur is None or _higher(dt, cur):
            best[level] = dt
    top = max(d.category for d in best if d is not None)
    for level, dt in enumerate(best):
        if dt is not None and dt.category == top:
            return dt if level < 2 else _DEFAULT_FOR_CATEGORY[top]


def _higher(a, b):
    """True when dtype a is the promoted type of a and b (a float beats any integer)."""
    if a.category != b.category:
        return a.category > b.category
    return from_numpy_dtype(np.promote_types(a.np_type, b.np_type)) is a and a is not b


class Size(tuple):
    """A tensor's shape: a tuple that prints as ``torch.Size([2, 3])``."""

    def __repr__(self):
        return f"torch.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n
