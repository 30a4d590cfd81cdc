"""Element-wise ops. Each is an autograd.Function, exactly like the ones
students write: forward computes on numpy arrays, backward is written with
Tensor operations, so it can itself be differentiated (``create_graph``).

Below each Function, ``register`` declares the function a program calls: ``mul`` is
``torch.mul``, ``x.mul(y)``, ``x * y`` and ``2 * x`` (see chibigrad/ops/__init__.py).

Broadcasting needs no code here: the engine sums each returned gradient back
to its input's shape (see ``engine._fit``), as PyTorch's engine does.
"""
import functools
import math

import numpy as np

from .. import _device, _dtype as _dtypes
from ..autograd import grad_mode
from ..autograd.forward_ad import add_tangents
from ..autograd.function import Function
from ..creation import default_generator
from ..tensor import Tensor, _parse_to, wrap
from .._dtype import get_default_dtype, result_type
from ._util import arrays, check_broadcast, cpu_scalars, float_array, operand, register, save_needed, write_out


class Add(Function):
    node_name = "AddBackward0"
    jvp_takes_none = True  # a missing tangent is left out of the sum (forward_ad.add_tangents)

    @staticmethod
    def forward(ctx, a, b):
        x, y = arrays(a, b)
        return wrap(x + y)

    @staticmethod
    def backward(ctx, grad):
        return grad, grad

    @staticmethod
    def jvp(ctx, ta, tb):
        return add_tangents(ctx.result, ta, tb)


@register("add", "__add__", "__radd__")
def add(a, other, alpha=1):
    other = operand(other, a)
    return Add.apply(a, other if alpha == 1 else other * alpha)


@register("add_", "__iadd__", torch=False)
def add_(a, other, alpha=1):
    _check_result_fits(a, other)
    return a._recorded_inplace(add, other, alpha=alpha)


def _check_result_fits(a, *others, true_divide=False, cpp_name=False):
    """An arithmetic in-place op may not give ``a`` values of a kind its dtype cannot hold
    (a float in an integer tensor, a number in a bool one): PyTorch refuses where copy_ converts."""
    result = result_type(a, *[wrap(o) if isinstance(o, np.ndarray) else o for o in others])
    if true_divide and not result.is_floating_point:
        result = _dtypes.float32
    if result.category > a.dtype.category:
        target = a.dtype.cpp_name if cpp_name else a.dtype.scalar_name
        raise RuntimeError(f"result type {result.scalar_name} can't be cast to the desired output type {target}")


class Sub(Function):
    node_name = "SubBackward0"
    jvp_takes_none = True

    @staticmethod
    def forward(ctx, a, b):
        x, y = arrays(a, b)
        return wrap(x - y)

    @staticmethod
    def backward(ctx, grad):
        return grad, -grad

    @staticmethod
    def jvp(ctx, ta, tb):
        return add_tangents(ctx.result, ta, None if tb is None else -tb)


@register("sub", "__sub__")
def sub(a, other, alpha=1):
    other = operand(other, a)
    return Sub.apply(a, other if alpha == 1 else other * alpha)


@register("sub_", "__isub__", torch=False)
def sub_(a, other, alpha=1):
    _check_result_fits(a, other)
    return a._recorded_inplace(sub, other, alpha=alpha)


class Rsub(Function):
    """``number - tensor``, as PyTorch records it."""
    node_name = "RsubBackward1"
    jvp_takes_none = True

    @staticmethod
    def forward(ctx, a, b):
        x, y = arrays(a, b)
        return wrap(y - x)

    @staticmethod
    def backward(ctx, grad):
        return -grad, None

    @staticmethod
    def jvp(ctx, ta, tb):
        return add_tangents(ctx.result, tb, None if ta is None else -ta)


@register("__rsub__", torch=False)
def rsub(a, number):
    return Rsub.apply(a, operand(number, a))


class Mul(Function):
    node_name = "MulBackward0"
    jvp_takes_none = True
    saved_names = ("other", "self")  # in PyTorch's order (see save_needed)

    @staticmethod
    def forward(ctx, a, b):
        save_needed(ctx, a, b)
        x, y = arrays(a, b)
        return wrap(x * y)

    @staticmethod
    def backward(ctx, grad):
        b, a = ctx.saved_tensors
        return (grad * b if ctx.needs_input_grad[0] else None,
                grad * a if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.primals
        return add_tangents(ctx.result, None if ta is None else ta * b, None if tb is None else a * tb)  # the product rule


@register("mul", "__mul__", "__rmul__")
def mul(a, other, *, out=None):
    return write_out("mul", Mul.apply(a, operand(other, a)), out)


@register("mul_", "__imul__", torch=False)
def mul_(a, other):
    _check_result_fits(a, other)
    return a._recorded_inplace(mul, other)


class Div(Function):
    node_name = "DivBackward0"
    saved_names = ("other", "self")  # in PyTorch's order (see save_needed)

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(b, a if ctx.needs_input_grad[1] else None)
        x, y = arrays(a, b)
        out = np.true_divide(x, y)
        if not (a.dtype.is_floating_point or b.dtype.is_floating_point):  # int / int: the default float type
            out = out.astype(get_default_dtype().np_type)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        b, a = ctx.saved_tensors
        return (grad / b if ctx.needs_input_grad[0] else None,
                -grad * a / (b * b) if ctx.needs_input_grad[1] else None)

    @staticmethod
    def jvp(ctx, ta, tb):
        return (ta - tb * ctx.result) / ctx.primals[1]  # (ta - tb a / b) / b


@register("div", "__truediv__")
def div(a, other):
    return Div.apply(a, operand(other, a))


@register("div_", "__itruediv__", torch=False)
def div_(a, other):
    _check_result_fits(a, other, true_divide=True)
    return a._recorded_inplace(div, other)


@register("__rtruediv__", torch=False)
def rdiv(a, number):
    return mul(reciprocal(a), number)


class Neg(Function):
    node_name = "NegBackward0"

    @staticmethod
    def forward(ctx, a):
        return wrap(-a._array)

    @staticmethod
    def backward(ctx, grad):
        return -grad

    @staticmethod
    def jvp(ctx, ta):
        return -ta


@register("neg", "__neg__")
def neg(a):
    if a.dtype is _dtypes.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")
    return Neg.apply(a)


class Pow(Function):
    """``tensor ** number``; d/dx x^p = p x^(p-1)."""
    node_name = "PowBackward0"
    saved_names = ("self",)
    saved_values = ("exponent",)

    @staticmethod
    def forward(ctx, a, exponent):
        ctx.save_for_backward(a)
        ctx.exponent = exponent
        x = a._array
        if not a.dtype.is_floating_point and isinstance(exponent, float):
            x = x.astype(get_default_dtype().np_type)
        elif not a.dtype.is_floating_point and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return wrap(np.power(x, x.dtype.type(exponent) if x.dtype.kind == "f" else exponent))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        p = ctx.exponent
        if p == 0:
            return grad * 0, None
        scaled = MulScalar.apply(a ** (p - 1), p)
        return grad * scaled, None

    @staticmethod
    def jvp(ctx, ta, _):
        a, p = ctx.primals
        return ta * 0 if p == 0 else ta * (a ** (p - 1) * p)


class MulScalar(Function):
    """``tensor * number`` inside a derivative formula: PyTorch's mul.Scalar, whose node is
    MulBackward1 (a user's ``x * 3`` wraps 3 in a tensor: MulBackward0)."""
    node_name = "MulBackward1"

    @staticmethod
    def forward(ctx, a, number):
        ctx.number = number
        return wrap(a._array * a._array.dtype.type(number))

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.number, None

    @staticmethod
    def jvp(ctx, ta, _):
        return ta * ctx.number


class DivScalar(Function):
    """``tensor / number`` in a formula written in C++ (as cross_entropy's mean over probability
    targets): PyTorch's div.Scalar, node DivBackward1 (a user's ``x / 3`` records DivBackward0)."""
    node_name = "DivBackward1"

    @staticmethod
    def forward(ctx, a, number):
        ctx.number = number
        return wrap(a._array / a._array.dtype.type(number))

    @staticmethod
    def backward(ctx, grad):
        return grad / ctx.number, None

    @staticmethod
    def jvp(ctx, ta, _):
        return ta / ctx.number


def _integer_power(x, y):
    """PyTorch's integer power: a negative exponent gives 0, except for bases 1 and -1
    (numpy refuses negative integer exponents)."""
    out = np.power(x, np.maximum(y, 0))
    return np.where(y >= 0, out, np.where(abs(x) == 1, np.where(y % 2 == 0, 1, x), 0)).astype(out.dtype)


class PowTensor(Function):
    """``tensor ** tensor``: both base and exponent get gradients."""
    node_name = "PowBackward1"
    saved_names = ("exponent", "self", "result")  # in PyTorch's order (see save_needed)

    @staticmethod
    def forward(ctx, a, b):
        x, y = arrays(a, b)
        out = wrap(np.power(x, y) if x.dtype.kind == "f" else _integer_power(x, y))
        ctx.save_for_backward(b, a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        b, a, out = ctx.saved_tensors
        zero = grad.new_zeros(())  # PyTorch's masks: 0 ** 0 has gradient 0 for base and exponent
        grad_a = where(b == 0, zero, grad * b * a ** (b - 1)) if ctx.needs_input_grad[0] else None
        grad_b = where((a == 0) & (b >= 0), zero, grad * out * a.log()) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.primals
        zero = ta.new_zeros(())  # the masks of backward: 0 ** 0 has derivative 0 in both
        return where(b == 0, zero, ta * b * a ** (b - 1)) + where((a == 0) & (b >= 0), zero, tb * ctx.result * a.log())


class RPow(Function):
    """``number ** tensor``; d/dx c^x = c^x log c."""
    node_name = "PowBackward2"

    @staticmethod
    def forward(ctx, base, a):
        dt = result_type(a, base).np_type  # 2 ** int tensor stays an int tensor
        out = wrap(np.power(dt.type(base), a._array.astype(dt, copy=False)))
        ctx.save_for_backward(out)
        ctx.log_base = float(np.log(base))
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return None, grad * out * ctx.log_base

    @staticmethod
    def jvp(ctx, _, ta):
        return ta * ctx.result * ctx.log_base


@register("pow", "__pow__")
def pow(a, exponent):  # noqa: A001 - PyTorch's name
    if isinstance(exponent, Tensor):
        return PowTensor.apply(a, exponent)
    return Pow.apply(a, exponent)


@register("__rpow__", torch=False)
def rpow(a, base):
    return RPow.apply(base, a)


class Exp(Function):
    node_name = "ExpBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, a):
        out = wrap(np.exp(float_array(a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out

    @staticmethod
    def jvp(ctx, ta):
        return ta * ctx.result


@register("exp")
def exp(a):
    """Element-wise exp (records ExpBackward0)."""
    return Exp.apply(a)


class Log(Function):
    node_name = "LogBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return wrap(np.log(float_array(a)))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / a

    @staticmethod
    def jvp(ctx, ta):
        return ta / ctx.primals[0]


@register("log")
def log(a):
    """Element-wise log (records LogBackward0)."""
    return Log.apply(a)


_math_erf = np.frompyfunc(math.erf, 1, 1)
# Abramowitz & Stegun 7.1.26: erf(x) = 1 - t * P(t) * exp(-x^2), t = 1 / (1 + p x), for x >= 0
_AS_P = 0.3275911
_AS_COEFFS = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)


def erf_array(x):
    """The error function of a float array.

    CuPy has its own (``cupyx.scipy.special.erf``); numpy has none, and chibigrad does not
    depend on scipy. On the CPU, float64 (what gradcheck uses) gets ``math.erf`` element by
    element: exact, but about 160 ns an element. Other floats get Abramowitz & Stegun 7.1.26,
    a vectorised formula whose error (< 1.5e-7, evaluated in float64) is about float32's own
    rounding error: fast where speed matters, exact where precision does.
    """
    library_erf = _device.library_erf(x)
    if library_erf is not None:
        return library_erf(x)
    if x.dtype == np.float64:
        return _math_erf(x).astype(np.float64)
    ax = np.abs(x).astype(np.float64)
    t = 1 / (1 + _AS_P * ax)
    poly = np.zeros_like(t)
    for c in _AS_COEFFS:
        poly = poly * t + c
    return np.copysign(1 - t * poly * np.exp(-ax * ax), x).astype(x.dtype)


class Erf(Function):
    """d erf(x)/dx = 2/sqrt(pi) exp(-x^2); GELU's backward and Normal.cdf are built on it."""
    node_name = "ErfBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return wrap(erf_array(a._array))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * (-a * a).exp() * (2 / math.sqrt(math.pi))

    @staticmethod
    def jvp(ctx, ta):
        a = ctx.primals[0]
        return ta * (-a * a).exp() * (2 / math.sqrt(math.pi))


@register("erf")
def erf(a):
    """The error function (records ErfBackward0); float32 is within 2 units in the last place."""
    return Erf.apply(a)


def _erfinv_array(y):
    """erf's inverse, in float64: Winitzki's closed-form guess (error about 2e-3), then Newton steps
    on the exact ``math.erf``, each of which squares the error. Beyond [-1, 1] it is NaN."""
    y64 = y.astype(np.float64)
    erf = _device.library_erf(y64) or (lambda v: _math_erf(v).astype(np.float64))  # CuPy's own on a GPU
    inside = np.minimum(np.maximum(y64, -1 + 1e-16), 1 - 1e-16)
    a = 0.147
    log = np.log1p(-inside * inside)
    term = 2 / (math.pi * a) + log / 2
    x = np.copysign(np.sqrt(np.sqrt(term * term - log / a) - term), inside)
    for _ in range(4):
        x = x - (erf(x) - inside) / (2 / math.sqrt(math.pi) * np.exp(-x * x))
    x = np.where(np.abs(y64) == 1, np.copysign(np.inf, y64), x)
    return np.where(np.abs(y64) > 1, np.nan, x).astype(y.dtype)


class Erfinv(Function):
    """d erfinv(y)/dy = sqrt(pi)/2 exp(erfinv(y)^2); Normal.icdf is built on it."""
    node_name = "ErfinvBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return wrap(_erfinv_array(float_array(a)))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * (a.erfinv() ** 2).exp() * (math.sqrt(math.pi) / 2)

    @staticmethod
    def jvp(ctx, ta):
        return ta * (ctx.primals[0].erfinv() ** 2).exp() * (math.sqrt(math.pi) / 2)


@register("erfinv")
def erfinv(a):
    """The inverse of erf on (-1, 1) (records ErfinvBackward0)."""
    return Erfinv.apply(a)


class Rsqrt(Function):
    """1 / sqrt(x), as normalisation layers (RMSNorm) compute it; d/dx = -0.5 * result**3."""
    node_name = "RsqrtBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, a):
        x = float_array(a)
        out = wrap((1 / np.sqrt(x)).astype(x.dtype, copy=False))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return -0.5 * grad * out.pow(3)

    @staticmethod
    def jvp(ctx, ta):
        return -0.5 * ta * ctx.result.pow(3)


@register("rsqrt")
def rsqrt(a):
    """Element-wise 1 / sqrt (records RsqrtBackward0)."""
    return Rsqrt.apply(a)


def _xlogy(x, y):
    """``x * log(y)``, 0 where ``x == 0`` (so 0 * log(0) is 0, the limit), NaN where ``y`` is NaN."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(x == 0, 0, x * np.log(y))
    return np.where(np.isnan(y), np.nan, out)


class Xlogy(Function):
    """Entropies and KL terms write ``p * log(p)``; at p = 0 this gives 0 and its gradient has no
    NaN (``p * torch.log(p)`` gives NaN there)."""
    node_name = "XlogyBackward0"
    jvp_takes_none = True
    saved_names = ("other", "self")  # in PyTorch's order

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(b, a)
        x, y = arrays(a, b)
        dtype = result_type(a, b)
        dtype = dtype if dtype.is_floating_point else get_default_dtype()  # integers give the default float
        return wrap(_xlogy(x, y).astype(dtype.np_type, copy=False))

    @staticmethod
    def backward(ctx, grad):
        b, a = ctx.saved_tensors
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = xlogy(grad, b).masked_fill((a == 0) & (b <= 0), 0.0)
        if ctx.needs_input_grad[1]:
            grad_b = grad * a / b
        return grad_a, grad_b

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.primals
        out = None if ta is None else xlogy(ta, b).masked_fill((a == 0) & (b <= 0), 0.0)
        return add_tangents(ctx.result, out, None if tb is None else tb * a / b)


@register("xlogy")
def xlogy(a, other):
    """``a * log(other)``, with 0 where ``a`` is 0 (records XlogyBackward0)."""
    if not isinstance(a, Tensor):
        a = operand(a, other)
    return Xlogy.apply(a, operand(other, a))


class Log2(Function):
    """log2(a) = log(a) / log(2), so its derivative is 1 / (a log 2)."""
    node_name = "Log2Backward0"
    saved_names = ("self",)
    log, base = staticmethod(np.log2), 2

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return wrap(ctx._forward_cls.log(float_array(a)))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / (a * float(np.log(ctx._forward_cls.base)))

    @staticmethod
    def jvp(ctx, ta):
        return ta / (ctx.primals[0] * float(np.log(ctx._forward_cls.base)))


class Log10(Log2):
    node_name = "Log10Backward0"
    log, base = staticmethod(np.log10), 10


@register("log2")
def log2(a):
    """Element-wise log2 (records Log2Backward0)."""
    return Log2.apply(a)


@register("log10")
def log10(a):
    """Element-wise log10 (records Log10Backward0)."""
    return Log10.apply(a)


class Log1p(Function):
    """log(1 + a), accurate for tiny a where 1 + a would round to 1."""
    node_name = "Log1PBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return wrap(np.log1p(float_array(a)))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad / (a + 1)

    @staticmethod
    def jvp(ctx, ta):
        return ta / (ctx.primals[0] + 1)


@register("log1p")
def log1p(a):
    """Element-wise log1p (records Log1PBackward0)."""
    return Log1p.apply(a)


class Expm1(Function):
    """exp(a) - 1, accurate for tiny a; its derivative exp(a) is the output plus one."""
    node_name = "Expm1Backward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, a):
        out = wrap(np.expm1(float_array(a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (out + 1)

    @staticmethod
    def jvp(ctx, ta):
        return ta * (ctx.result + 1)


@register("expm1")
def expm1(a):
    """Element-wise expm1 (records Expm1Backward0)."""
    return Expm1.apply(a)


class Sqrt(Function):
    node_name = "SqrtBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, a):
        out = wrap(np.sqrt(float_array(a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad / (2 * out)

    @staticmethod
    def jvp(ctx, ta):
        return ta / (2 * ctx.result)


@register("sqrt")
def sqrt(a):
    """Element-wise sqrt (records SqrtBackward0)."""
    return Sqrt.apply(a)


class Abs(Function):
    node_name = "AbsBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return wrap(np.abs(a._array))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * a.sign()

    @staticmethod
    def jvp(ctx, ta):
        return ta * ctx.primals[0].sign()


@register("abs", "__abs__", torch=("abs",))
def absolute(a):
    """Element-wise abs (records AbsBackward0)."""
    return Abs.apply(a)


class Sin(Function):
    node_name = "SinBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return wrap(np.sin(float_array(a)))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * a.cos()

    @staticmethod
    def jvp(ctx, ta):
        return ta * ctx.primals[0].cos()


@register("sin")
def sin(a):
    """Element-wise sin (records SinBackward0)."""
    return Sin.apply(a)


class Cos(Function):
    node_name = "CosBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return wrap(np.cos(float_array(a)))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return -grad * a.sin()

    @staticmethod
    def jvp(ctx, ta):
        return -ta * ctx.primals[0].sin()


@register("cos")
def cos(a):
    """Element-wise cos (records CosBackward0)."""
    return Cos.apply(a)


class Tanh(Function):
    node_name = "TanhBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, a):
        out = wrap(np.tanh(float_array(a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * _one_minus_square(out)

    @staticmethod
    def jvp(ctx, ta):
        return ta * (1 - ctx.result * ctx.result)


def _one_minus_square(y):
    """``1 - y * y`` rounded once, as PyTorch's tanh backward computes it.

    PyTorch's kernel is written ``a * (1 - b * b)``, but its compiler fuses the multiply
    and the subtraction into one FMA: in float32, plain ``1 - y * y`` (two roundings)
    differs from it in the last bit for about 30% of elements, and a manual backprop
    check (``(1 - h**2) * dh == hprebn.grad``) would then agree where PyTorch's does not.
    float32 squares are exact in float64, so computing there and rounding once gives
    PyTorch's values. Under create_graph the plain, differentiable formula is used.
    """
    if isinstance(y, Tensor):
        if grad_mode._state.enabled:  # create_graph: record the ops
            return 1 - y * y
        return wrap(_one_minus_square(y._array))
    if y.dtype != np.float32:
        return 1 - y * y
    return (1 - y.astype(np.float64) ** 2).astype(np.float32)


@register("tanh")
def tanh(a):
    """Element-wise tanh (records TanhBackward0)."""
    return Tanh.apply(a)


class Sigmoid(Function):
    node_name = "SigmoidBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, a):
        x = float_array(a)
        # exp of a non-positive number never overflows
        e = np.exp(-np.abs(x))
        out = wrap(np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * (1 - out) * out  # PyTorch's order: grad * out * (1 - out) differs in the last bit

    @staticmethod
    def jvp(ctx, ta):
        return ta * (1 - ctx.result) * ctx.result


@register("sigmoid")
def sigmoid(a):
    """Element-wise sigmoid (records SigmoidBackward0)."""
    return Sigmoid.apply(a)


class Relu(Function):
    node_name = "ReluBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, a):
        out = wrap(np.maximum(a._array, 0))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return ThresholdBackward.apply(grad, out)

    @staticmethod
    def jvp(ctx, ta):
        return ThresholdBackward.apply(ta, ctx.result)


def _threshold_backward(grad, out):
    """The gradient where ReLU's output is positive, 0 elsewhere, even where the gradient is
    inf or nan: PyTorch selects, and multiplying by the mask would give nan there. The selection
    is a bitwise AND with a mask of all-ones or all-zeros words: ``np.where`` does the same
    5-10x slower on float32 here."""
    ints = np.dtype(f"i{grad.dtype.itemsize}")
    mask = np.subtract(0, out > 0, dtype=ints)  # True -> -1: every bit set
    return np.bitwise_and(grad.view(ints), mask, out=mask if mask.ndim else None).view(grad.dtype)


class ThresholdBackward(Function):
    """ReLU's backward as a recorded op (PyTorch's threshold_backward), for create_graph.

    It is linear in the gradient, so its own backward is itself again (as in PyTorch). It
    depends on the saved output only through the mask, so that derivative is zero; PyTorch
    still records the edge, and what feeds the output (a bias) gets a zero gradient rather
    than none."""
    node_name = "ThresholdBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, out):
        ctx.save_for_backward(out)
        return wrap(_threshold_backward(grad._array, out._array))

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return ThresholdBackward.apply(grad, out), grad.new_zeros(grad.shape) if ctx.needs_input_grad[1] else None

    @staticmethod
    def jvp(ctx, t_grad, _):
        return ThresholdBackward.apply(t_grad, ctx.primals[1])


@register("relu")
def relu(a):
    """Element-wise relu (records ReluBackward0)."""
    return Relu.apply(a)


@register("relu_", torch=False)
def relu_(a):
    return a._recorded_inplace(relu)


class Clamp(Function):
    """The gradient passes where the input was inside [min, max]."""
    node_name = "ClampBackward1"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, a, min=None, max=None):
        ctx.save_for_backward(a)
        ctx.bounds = [_bound(b, a) for b in (min, max)]
        dt = result_type(a, *[b for b in (min, max) if b is not None]).np_type  # an int clamped at 0.5: float32
        return wrap(np.clip(a._array.astype(dt, copy=False), *ctx.bounds).astype(dt, copy=False))

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        lo, hi = ctx.bounds
        x = a._array
        inside = np.ones_like(x, dtype=bool)
        if lo is not None:
            inside &= x >= lo
        if hi is not None:
            inside &= x <= hi
        return grad * wrap(inside), None, None

    @staticmethod
    def jvp(ctx, ta, *_):
        x, (lo, hi) = ctx.primals[0]._array, ctx.bounds
        inside = (x >= (-np.inf if lo is None else lo)) & (x <= (np.inf if hi is None else hi))
        return ta * wrap(inside)


def _bound(bound, a):
    """A clamp bound as an array on ``a``'s device (a 0-d CPU tensor joins as a scalar)."""
    if not isinstance(bound, Tensor):
        return bound
    if type(bound._array) is type(a._array):
        return bound._array
    return cpu_scalars(a._array, bound._array)[1]


class ClampTensor(Clamp):
    """clamp with tensor bounds; the bounds themselves get no gradient here."""
    node_name = "ClampBackward0"


@register("clamp", "clip", torch=("clamp", "clip"))
def clamp(a, min=None, max=None):  # noqa: A002
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return ClampTensor.apply(a, min, max)
    return Clamp.apply(a, min, max)


@register("clamp_", torch=False)
def clamp_(a, min=None, max=None):  # noqa: A002
    _check_result_fits(a, *[b for b in (min, max) if b is not None], cpp_name=True)
    return a._recorded_inplace(clamp, min, max)


class Where(Function):
    node_name = "WhereBackward0"

    @staticmethod
    def forward(ctx, condition, a, b):
        if condition.shape != a.shape:  # PyTorch broadcasts the condition with a first, then with b
            check_broadcast(condition.shape, a.shape)
            check_broadcast(np.broadcast_shapes(condition.shape, a.shape), b.shape)
        x, y = arrays(a, b)
        if not type(condition) is type(x) is type(y):
            condition, x, y = cpu_scalars(condition, x, y)
        ctx.condition = condition  # a bool array, not a Tensor: no graph edge, as in PyTorch
        return wrap(np.where(condition, x, y))

    @staticmethod
    def backward(ctx, grad):
        zero, condition = grad.new_zeros(()), wrap(ctx.condition)
        return None, where(condition, grad, zero), where(condition, zero, grad)

    @staticmethod
    def jvp(ctx, _, ta, tb):
        return where(wrap(ctx.condition), ta, tb)


@register()
def where(condition, a, b):
    a = operand(a, b if hasattr(b, "dtype") else wrap(np.asarray(0.0, dtype=np.float32)))
    condition = condition._array if isinstance(condition, Tensor) else np.asarray(condition)
    return Where.apply(condition, a, operand(b, a))


@register("masked_fill", torch=False)
def masked_fill(a, mask, value):
    return where(mask, value, a)


class Maximum(Function):
    """Ties share the gradient equally, as in PyTorch."""
    node_name = "MaximumBackward0"
    saved_names = ("other", "self")  # in PyTorch's order (see save_needed)

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(b, a)
        x, y = arrays(a, b)
        return wrap(np.maximum(x, y))

    @staticmethod
    def backward(ctx, grad):
        b, a = ctx.saved_tensors
        return _split_by(grad, a > b, a == b), _split_by(grad, a < b, a == b)

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.primals
        return _split_by(ta, a > b, a == b) + _split_by(tb, a < b, a == b)


class Minimum(Function):
    node_name = "MinimumBackward0"
    saved_names = ("other", "self")  # in PyTorch's order (see save_needed)

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(b, a)
        x, y = arrays(a, b)
        return wrap(np.minimum(x, y))

    @staticmethod
    def backward(ctx, grad):
        b, a = ctx.saved_tensors
        return _split_by(grad, a < b, a == b), _split_by(grad, a > b, a == b)

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.primals
        return _split_by(ta, a < b, a == b) + _split_by(tb, a > b, a == b)


@register("maximum")
def maximum(a, other):
    return Maximum.apply(a, other)


@register("minimum")
def minimum(a, other):
    return Minimum.apply(a, other)


class Hypot(Function):
    """``sqrt(a**2 + b**2)`` without overflow; d/da = a / hypot(a, b).

    Students write this op in exercise 02.hypot: the student edition of
    chibigrad has the two marked regions replaced by a NotImplementedError.
    """
    node_name = "HypotBackward0"

    @staticmethod
    def forward(ctx, a, b):
        # BEGIN EXERCISE 02.hypot
        x, y = arrays(a, b)
        out = wrap(np.hypot(x, y))
        ctx.save_for_backward(a, b, out)
        return out
        # END EXERCISE

    @staticmethod
    def backward(ctx, grad):
        # BEGIN EXERCISE 02.hypot
        a, b, out = ctx.saved_tensors
        return grad * a / out, grad * b / out  # the engine sums each back to its input's shape
        # END EXERCISE

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.primals
        return (ta * a + tb * b) / ctx.result


@register()
def hypot(a, b):
    return Hypot.apply(a, operand(b, a))


def _split_by(grad, wins, ties):
    """All of ``grad`` where this input won, half where it tied."""
    return grad * wins + grad * ties * 0.5


class _ZeroGrad(Function):
    """Piecewise-constant ops (round, floor, sign): the gradient is zero."""

    @staticmethod
    def backward(ctx, grad):
        return grad * 0

    @staticmethod
    def jvp(ctx, ta):
        return ta * 0


class Round(_ZeroGrad):
    node_name = "RoundBackward0"

    @staticmethod
    def forward(ctx, a):
        return wrap(np.round(a._array))


class RoundDecimals(Function):
    """``round(decimals=d)``: PyTorch scales by 10**d in the tensor's own dtype, rounds half to even,
    and scales back (for d < 0, divides first), so the last bits match only when done in that order."""
    node_name = "RoundBackward1"

    @staticmethod
    def forward(ctx, a, decimals):
        x = a._array
        scale = x.dtype.type(10.0 ** abs(decimals))
        return wrap(np.rint(x / scale) * scale if decimals < 0 else np.rint(x * scale) / scale)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, None

    @staticmethod
    def jvp(ctx, ta, _):
        return ta * 0


@register("round")
def round(a, decimals=0):  # noqa: A001 - PyTorch's name
    """Round half to even; with ``decimals``, to that many decimal places (RoundBackward1)."""
    return Round.apply(a) if decimals == 0 else RoundDecimals.apply(a, decimals)


class Remainder(Function):
    """``a % b``, with the sign of ``b`` as Python's ``%``: ``a - floor(a / b) * b``.

    d/da is 1; d/db is ``-floor(a / b)``, a constant between jumps (computed
    without recording: its own derivative is zero wherever it exists).
    """
    node_name = "RemainderBackward1"
    rounding, result = staticmethod(np.floor), staticmethod(np.remainder)

    @staticmethod
    def forward(ctx, a, b):
        x, y = arrays(a, b)
        _check_integer_divisor(y)
        if ctx.needs_input_grad[1]:
            ctx.quotient = wrap(ctx._forward_cls.rounding(x / y))
        return wrap(ctx._forward_cls.result(x, y))

    @staticmethod
    def backward(ctx, grad):
        return grad, -grad * ctx.quotient if ctx.needs_input_grad[1] else None

    @staticmethod
    def jvp(ctx, ta, tb):
        x, y = arrays(*ctx.primals)
        return ta - tb * wrap(ctx._forward_cls.rounding(x / y))


class RemainderScalar(Remainder):
    node_name = "RemainderBackward0"  # ``tensor % number``: PyTorch's Scalar overload


class Fmod(Remainder):
    """``fmod(a, b)``, with the sign of ``a`` as C's fmod: ``a - trunc(a / b) * b``."""
    node_name = "FmodBackward1"
    rounding, result = staticmethod(np.trunc), staticmethod(np.fmod)


class FmodScalar(Fmod):
    node_name = "FmodBackward0"


@register("remainder", "__mod__")
def remainder(a, other):
    """``a % b`` (the sign of b, as Python's %)."""
    if isinstance(other, Tensor):
        return Remainder.apply(operand(a, other), other)
    return RemainderScalar.apply(a, operand(other, a))


@register("__rmod__", torch=False)
def rremainder(a, number):
    """``number % a``."""
    return remainder(number, a)


@register("fmod")
def fmod(a, other):
    """C's fmod (the sign of a)."""
    if isinstance(other, Tensor):
        return Fmod.apply(a, other)
    return FmodScalar.apply(a, operand(other, a))


def _check_integer_divisor(y):
    """An integer remainder by zero is PyTorch's error (a float one is nan)."""
    if y.dtype.kind in "iub" and not y.all():
        raise RuntimeError("ZeroDivisionError")


class Floor(_ZeroGrad):
    node_name = "FloorBackward0"

    @staticmethod
    def forward(ctx, a):
        return wrap(np.floor(a._array))


@register("floor")
def floor(a):
    """Element-wise floor (records FloorBackward0)."""
    return Floor.apply(a)


class Sign(_ZeroGrad):
    node_name = "SignBackward0"

    @staticmethod
    def forward(ctx, a):
        return wrap(np.sign(a._array))


@register("sign")
def sign(a):
    """Element-wise sign (records SignBackward0)."""
    return Sign.apply(a)


class Reciprocal(Function):
    node_name = "ReciprocalBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, a):
        out = wrap(1 / float_array(a))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return -grad * out * out

    @staticmethod
    def jvp(ctx, ta):
        return -ta * ctx.result * ctx.result


@register("reciprocal")
def reciprocal(a):
    """Element-wise reciprocal (records ReciprocalBackward0)."""
    return Reciprocal.apply(a)


class Clone(Function):
    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, a):
        return wrap(a._array.copy())

    @staticmethod
    def backward(ctx, grad):
        return grad

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


@register("clone")
def clone(a, memory_format=None):
    return Clone.apply(a)


@register()
def detach(a):
    return a.detach()


class ToCopy(Function):
    """A dtype and/or device change (``dtype``/``device`` None: unchanged).

    The gradient goes back to the source's device here (the engine would refuse
    it elsewhere) and is cast back to its dtype by the engine."""
    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, a, dtype, device=None):
        x = a._array
        ctx.source_device = _device.device_of(x)
        if dtype is not None:
            x = x.astype(dtype.np_type)
        return wrap(x if device is None else _device.to_device(x, device))

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.source_device), None, None

    @staticmethod
    def jvp(ctx, t, *_):
        return ctx._forward_cls.apply(t, *ctx.primals[1:])  # a linear op: J v is the op applied to v


@register("to", torch=False)
def to(a, *args, **kwargs):
    """Change device and/or dtype (differentiable); returns self when nothing changes, as PyTorch."""
    dev, dt = _parse_to(args, kwargs)
    if dev is not None:
        dev = _device.as_device(dev)
        if dev == a.device:
            dev = None
    if dt is a.dtype:
        dt = None
    if dt is None and dev is None:
        return a
    return ToCopy.apply(a, dt, dev)


class Copy(Function):
    """``dst.copy_(src)``: the old values of dst get no gradient."""
    node_name = "CopyBackwards"

    @staticmethod
    def forward(ctx, dst, src):
        ctx.src_device = src.device  # copy_ may copy across devices
        x = _device.to_device(src._array, _device.device_of(dst._array))
        return wrap(np.broadcast_to(x, dst.shape).astype(dst._array.dtype))

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, grad.to(ctx.src_device)

    @staticmethod
    def jvp(ctx, t_dst, t_src):
        return Copy.apply(t_dst, t_src)


@register("copy_", torch=False)
def copy_(a, src):
    return a._recorded_inplace(Copy.apply, src)


class Fill(Function):
    node_name = "FillBackward2"

    @staticmethod
    def forward(ctx, dst, value):
        value = value.item() if hasattr(value, "item") else value
        return wrap(np.full_like(dst._array, value))

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, None

    @staticmethod
    def jvp(ctx, t_dst, _):
        return t_dst * 0


class Zero(Fill):
    node_name = "ZeroBackward0"


@register("fill_", torch=False)
def fill_(a, value):
    return a._recorded_inplace(Fill.apply, value)


@register("zero_", torch=False)
def zero_(a):
    return a._recorded_inplace(Zero.apply, 0)


class RandomFill(Fill):
    """In-place random fills (``x.normal_()``, ...): the new values do not depend on the old ones,
    so the gradient to them is zero, as for ``fill_``. Values come from chibigrad's generator."""

    @staticmethod
    def forward(ctx, dst, draw):
        values = np.asarray(draw(dst.shape), dtype=dst._array.dtype)
        return wrap(_device.to_device(values, _device.device_of(dst._array)))


class Normal(RandomFill):
    node_name = "NormalBackward0"


class Uniform(RandomFill):
    node_name = "UniformBackward0"


class Bernoulli(RandomFill):
    node_name = "BernoulliBackward2"


class Exponential(RandomFill):
    node_name = "ExponentialBackward0"


# In-place random fills, as nn.init and tutorials call them; values from chibigrad's generator.
@register("normal_", torch=False)
def normal_(a, mean=0.0, std=1.0, generator=None):
    return a._recorded_inplace(Normal.apply, lambda shape: _rng(generator).normal(mean, std, shape))


@register("uniform_", torch=False)
def uniform_(a, from_=0.0, to=1.0, generator=None):  # PyTorch's `from` is a keyword in Python
    return a._recorded_inplace(Uniform.apply, lambda shape: _rng(generator).uniform(from_, to, shape))


@register("bernoulli_", torch=False)
def bernoulli_(a, p=0.5, generator=None):
    return a._recorded_inplace(Bernoulli.apply, lambda shape: _rng(generator).random(shape) < p)


@register("exponential_", torch=False)
def exponential_(a, lambd=1.0, generator=None):
    return a._recorded_inplace(Exponential.apply, lambda shape: _rng(generator).exponential(1 / lambd, shape))


def _rng(generator):
    """The numpy generator to draw from: the one given, or chibigrad's global one (``manual_seed``)."""
    return generator or default_generator()


# ---- comparisons and logic: results are bool tensors, never differentiable ----

class Compare(Function):
    """Comparisons and tests (``x > 0``, ``isnan``): numpy's ``fn`` on one or two operands, a bool
    result that is never differentiable. A Function all the same, so that vmap meets them as it
    meets every op (its batching rule, chibigrad/batching_rules.py)."""

    @staticmethod
    def forward(ctx, a, other, fn):
        if other is _UNARY:
            return wrap(fn(a._array))
        x, y = a._array, other._array if isinstance(other, Tensor) else other
        if isinstance(other, Tensor) and type(x) is not type(y):
            x, y = cpu_scalars(x, y)
        return wrap(fn(x, y))

    @staticmethod
    def jvp(ctx, *tangents):
        return None  # a bool result has no tangent


_UNARY = "unary"  # Compare's ``other`` for a test of one tensor (isnan)


def _compare(a, other, fn):
    return Compare.apply(a, other, fn)


@register("eq", "__eq__", torch=False)
def eq(a, other):
    return _compare(a, other, np.equal)


@register("ne", "__ne__", torch=False)
def ne(a, other):
    return _compare(a, other, np.not_equal)


@register("lt", "__lt__", torch=False)
def lt(a, other):
    return _compare(a, other, np.less)


@register("le", "__le__", torch=False)
def le(a, other):
    return _compare(a, other, np.less_equal)


@register("gt", "__gt__", torch=False)
def gt(a, other):
    return _compare(a, other, np.greater)


@register("ge", "__ge__", torch=False)
def ge(a, other):
    return _compare(a, other, np.greater_equal)


@register("__and__", torch=False)
def bitwise_and(a, other):
    return _compare(a, other, np.logical_and if a.dtype.name == "bool" else np.bitwise_and)


@register("__or__", torch=False)
def bitwise_or(a, other):
    return _compare(a, other, np.logical_or if a.dtype.name == "bool" else np.bitwise_or)


@register("__invert__", torch=False)
def bitwise_not(a):
    return Compare.apply(a, _UNARY, np.invert)


@register("logical_not", torch=False)
def logical_not(a):
    return Compare.apply(a, _UNARY, np.logical_not)


@register("isnan")
def isnan(a):
    """Where the values are nan: a bool tensor, outside autograd (as every comparison)."""
    return Compare.apply(a, _UNARY, np.isnan)


@register("isinf")
def isinf(a):
    return Compare.apply(a, _UNARY, np.isinf)


@register("isfinite")
def isfinite(a):
    """Neither nan nor infinite: the check a training loop makes on its loss before stepping."""
    return Compare.apply(a, _UNARY, np.isfinite)


@register("equal")
def equal(a, other):
    if a._level is not None or other._level is not None:  # a Python bool per sample: vmap cannot return it
        raise RuntimeError("Batching rule not implemented for aten::equal. We could not generate a fallback.")
    if a.shape != other.shape:
        return False
    x, y = _arrays(a, other)
    return bool((x == y).all())


@register()
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    if a._level is not None or getattr(b, "_level", None) is not None:  # (as equal)
        raise RuntimeError("vmap over torch.allclose isn't supported yet. Please file an issue at "
                           "https://github.com/pytorch/pytorch/issues if you need this feature.")
    return bool(np.allclose(*_arrays(a, b), rtol=rtol, atol=atol, equal_nan=equal_nan))


@register()
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    x, y = _arrays(a, b)
    return Compare.apply(a, b if isinstance(b, Tensor) else y,
                         functools.partial(np.isclose, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _arrays(a, b):
    """The arrays of tensor ``a`` and of ``b`` (a tensor or data), devices checked."""
    x, y = a._array, b._array if isinstance(b, Tensor) else np.asarray(b)
    return (x, y) if type(x) is type(y) else cpu_scalars(x, y)



def _unary_inplace(op, floating):
    """``a.sin_()`` and friends: the out-of-place op written back into ``a`` (its node, say
    SinBackward0, becomes ``a``'s grad_fn). A float result does not fit an integer tensor."""
    def inplace(a):
        if floating and not a.dtype.is_floating_point:
            raise RuntimeError(f"result type Float can't be cast to the desired output type {a.dtype.scalar_name}")
        return a._recorded_inplace(op)
    inplace.__name__ = op.__name__ + "_"
    return inplace


for _op, _floating in ((exp, True), (log, True), (sqrt, True), (sin, True), (cos, True), (tanh, True),
                       (sigmoid, True), (neg, False)):
    register(_op.__name__ + "_")(_unary_inplace(_op, _floating))
