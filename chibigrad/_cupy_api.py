"""The numpy calls chibigrad makes on CUDA arrays, each checked to exist in CuPy.

A CuPy array answers ``np.f(x)`` with ``cupy.f`` and a ufunc ``np.u(x)`` with ``cupy.u`` (or
``cupyx.scipy.special.u``), looked up by name; a name CuPy lacks raises TypeError, on a GPU only.
The simulated CUDA device (``chibigrad._device``) refuses every numpy call on its arrays that is
not listed here, so a new call fails on every machine until someone checks CuPy has it and
adds it.

How the list was checked: ``python scripts/check_cupy_api.py --source DIR`` with DIR a CuPy
source tree at tag v14.2.0 (the version of the first real-GPU run): every name below is bound
by ``cupy/__init__.py`` (ufuncs: or ``cupyx/scipy/special/__init__.py``). Where CuPy is
installed, ``python scripts/check_cupy_api.py`` checks the installed one.

The entries were found by running tests/test_device.py, chapter 9 and the 09_gpu notebook on
the simulated device with every call logged, plus the element-wise ufuncs chibigrad's ops name
(`all` and `any`: since gradcheck and vmap's Functions call them on device arrays).
"""

# numpy functions (``__array_function__``; also the simulated array module's ``xp.<name>``)
CUPY_FUNCTIONS = frozenset(f"numpy.{name}" for name in (
    "all", "amax", "amin", "any", "arange", "argmax", "argmin", "broadcast_to", "clip", "concatenate", "cumprod",
    "expand_dims", "eye", "full_like", "moveaxis", "ones_like", "reshape", "round", "split", "stack", "std",
    "swapaxes", "take_along_axis", "transpose", "var", "where", "zeros", "zeros_like",
))

# ufuncs, by ``ufunc.__name__`` (``np.abs`` is "absolute", ``np.true_divide`` is "divide")
CUPY_UFUNCS = frozenset((
    "absolute", "add", "bitwise_and", "bitwise_or", "ceil", "copysign", "cos", "divide", "equal", "exp", "expm1",
    "floor", "fmod", "greater", "greater_equal", "hypot", "isfinite", "isinf", "isnan", "less", "less_equal", "log",
    "log10", "log1p", "log2", "logical_and", "logical_not", "logical_or", "matmul", "maximum", "minimum",
    "multiply", "negative", "not_equal", "power", "remainder", "rint", "sign", "sin", "sqrt", "square",
    "subtract", "tanh", "trunc",
))
