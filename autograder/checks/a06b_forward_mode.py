"""Hidden tests of assignment 06b_forward_mode: jvp rules of custom Functions, checked against central
differences (float64) and against the full Jacobian that reverse mode builds from the engine's own ops
(or, where chibigrad has no such op, from numpy's formula for the derivative), on random shapes with
broadcasting, inputs without a tangent, float32, and inside torch.func."""
import numpy as np

import chibigrad as torch
import chibigrad.autograd.forward_ad as fwAD
from chibigrad import func

from . import assert_close, call, expect


def _tensor(rng, shape, low=-2.0, high=2.0, dtype=torch.float64):
    return torch.tensor(rng.uniform(low, high, shape), dtype=dtype)


def _forward_tangent(case, fn, inputs, tangents):
    """The tangent forward mode gives, ``None`` entries of ``tangents`` meaning: no dual for that input."""
    def run():
        with fwAD.dual_level():
            args = [x if t is None else fwAD.make_dual(x, t) for x, t in zip(inputs, tangents)]
            out = fn(*args)
            expect(isinstance(out, torch.Tensor), f"{case}: apply must return a Tensor, got {type(out).__name__}")
            return fwAD.unpack_dual(out).tangent
    tangent = call(f"{case}, in forward mode", run)
    expect(tangent is not None, f"{case}: the output has no tangent; jvp must return the output's tangent")
    return tangent


def _central_difference(fn, inputs, tangents, eps=1e-6):
    def moved(sign):
        with torch.no_grad():
            return fn(*[x if t is None else x + sign * eps * t for x, t in zip(inputs, tangents)])._array
    return (moved(1) - moved(-1)) / (2 * eps)


def _check_rule(case, fn, inputs, tangents, reverse=None, rtol=1e-6):
    """Forward mode's J v against central differences and, if given, against ``reverse`` (a function of the
    same inputs built from engine ops): J from jacrev, times v."""
    tangent = _forward_tangent(case, fn, inputs, tangents)
    expected = _central_difference(fn, inputs, tangents)
    assert_close(tangent, expected, f"{case}: J v against central differences", rtol=rtol, atol=1e-7)
    if reverse is not None:
        total = 0
        for i, (x, t) in enumerate(zip(inputs, tangents)):
            if t is None:
                continue
            jac = func.jacrev(reverse, argnums=i)(*inputs)._array
            total = total + jac.reshape(*expected.shape, -1) @ t._array.reshape(-1)
        assert_close(tangent, total, f"{case}: J v against the Jacobian from reverse mode", rtol=rtol, atol=1e-9)
    return tangent


def _check_float32(case, fn, inputs, tangents):
    tangent = _forward_tangent(case, fn, inputs, tangents)
    expect(tangent.dtype == torch.float32, f"{case}: a float32 input's tangent should stay float32, got "
                                           f"{tangent.dtype}")


# ---- Exercise 1: Softplus --------------------------------------------------------------------------------------------

def _softplus_by_ops(x):
    return x.clamp(min=0) + (-x.abs()).exp().log1p()


def check_softplus(Softplus):
    rng = np.random.default_rng(61)
    for shape in ((5,), (2, 3), (), (2, 1, 3)):
        x, v = _tensor(rng, shape, -4.0, 4.0), _tensor(rng, shape)
        _check_rule(f"Softplus on shape {shape}", Softplus.apply, [x], [v], reverse=_softplus_by_ops)
    x = torch.tensor([-1000.0, -40.0, 0.0, 40.0, 1000.0], dtype=torch.float64)
    tangent = _forward_tangent("Softplus at x = [-1000, -40, 0, 40, 1000]", Softplus.apply, [x], [torch.ones_like(x)])
    expect(bool(np.all(np.isfinite(tangent._array))), f"Softplus at large |x|: the tangent is not finite: "
                                                      f"{tangent._array} (sigmoid is stable, exp(x) / (1 + exp(x)) "
                                                      "is not)")
    assert_close(tangent, [0.0, np.exp(-40.0), 0.5, 1.0, 1.0], "Softplus at large |x|: tangent", rtol=1e-9)
    _check_float32("Softplus on float32", Softplus.apply, [torch.tensor([0.5, -1.0])], [torch.tensor([1.0, 2.0])])
    x, v = _tensor(rng, (3,)), _tensor(rng, (3,))
    _, jv = call("torch.func.jvp of a program using Softplus", func.jvp, lambda t: Softplus.apply(t * 2).sum(),
                 (x,), (v,))
    assert_close(jv, float((2 * v._array / (1 + np.exp(-2 * x._array))).sum()),
                 "torch.func.jvp(lambda t: Softplus.apply(t * 2).sum(), (x,), (v,))", rtol=1e-9)


# ---- Exercise 2: Atan2 -----------------------------------------------------------------------------------------------

ATAN2_SHAPES = (((4,), (4,)), ((3, 1), (4,)), ((2, 3), ()), ((), (5,)), ((2, 1, 3), (4, 1)))


def _atan2_tangent(y, x, yt, xt):
    """numpy's formula: d atan2 = (x dy - y dx) / (x^2 + y^2)."""
    return (x * yt - y * xt) / (x * x + y * y)


def check_atan2(Atan2):
    rng = np.random.default_rng(62)
    for y_shape, x_shape in ATAN2_SHAPES:
        y = _tensor(rng, y_shape)
        x = torch.tensor(rng.uniform(0.3, 2.0, x_shape) * rng.choice([-1.0, 1.0], x_shape))  # away from the origin
        yt, xt = _tensor(rng, y_shape), _tensor(rng, x_shape)
        case = f"Atan2 of y {y_shape} and x {x_shape}"
        tangent = _check_rule(case, Atan2.apply, [y, x], [yt, xt])
        y_, x_, yt_, xt_ = (t._array for t in (y, x, yt, xt))
        assert_close(tangent, _atan2_tangent(y_, x_, yt_, xt_), f"{case}: J v against the formula", rtol=1e-9)
        only_y = _forward_tangent(f"{case}, only y dual", Atan2.apply, [y, x], [yt, None])
        assert_close(only_y, np.broadcast_to(_atan2_tangent(y_, x_, yt_, 0 * xt_), only_y.shape),
                     f"{case}, only y has a tangent (x's is zeros)", rtol=1e-9)
        only_x = _forward_tangent(f"{case}, only x dual", Atan2.apply, [y, x], [None, xt])
        assert_close(only_x, np.broadcast_to(_atan2_tangent(y_, x_, 0 * yt_, xt_), only_x.shape),
                     f"{case}, only x has a tangent (y's is zeros)", rtol=1e-9)
    _check_float32("Atan2 on float32", Atan2.apply, [torch.tensor([1.0, -1.0]), torch.tensor([0.5, 2.0])],
                   [torch.tensor([1.0, 1.0]), torch.tensor([0.0, 1.0])])
    y, x = _tensor(rng, (3,)), _tensor(rng, (3,), 0.5, 2.0)
    jf = call("torch.func.jacfwd of Atan2 in y", func.jacfwd(lambda t: Atan2.apply(t, x)), y)
    assert_close(jf, np.diag(x._array / (x._array ** 2 + y._array ** 2)), "jacfwd(lambda y: Atan2.apply(y, x))(y)",
                 rtol=1e-9)


# ---- Exercise 3: Normalize -------------------------------------------------------------------------------------------

NORMALIZE_CASES = (((4,), 0), ((2, 3), 1), ((2, 3), 0), ((2, 3, 4), -1), ((3, 2, 2), 1), ((1, 5), -2))


def _normalize_by_ops(dim):
    return lambda x: x / (x * x).sum(dim, keepdim=True).sqrt()


def check_normalize(Normalize):
    rng = np.random.default_rng(63)
    for shape, dim in NORMALIZE_CASES:
        x, v = _tensor(rng, shape), _tensor(rng, shape)
        case = f"Normalize of shape {shape} along dim {dim}"
        _check_rule(case, lambda t, d=dim: Normalize.apply(t, d), [x], [v], reverse=_normalize_by_ops(dim))
    x = _tensor(rng, (2, 3))
    along = _forward_tangent("Normalize, x moving along itself", lambda t: Normalize.apply(t, 1), [x], [x * 3])
    assert_close(along, np.zeros((2, 3)), "Normalize: moving x along x (scaling it) leaves x / |x| unchanged",
                 rtol=1e-9)
    _check_float32("Normalize on float32", lambda t: Normalize.apply(t, 0), [torch.tensor([3.0, 4.0])],
                   [torch.tensor([1.0, 0.0])])


# ---- Exercise 4: Inverse ---------------------------------------------------------------------------------------------

def _invertible(rng, shape):
    n = shape[-1]
    return torch.tensor(rng.uniform(-1.0, 1.0, shape) + 3 * np.eye(n))


def check_inverse(Inverse):
    rng = np.random.default_rng(64)
    for shape in ((2, 2), (3, 3), (4, 4), (2, 3, 3), (2, 2, 2, 2), (1, 1)):
        A, V = _invertible(rng, shape), _tensor(rng, shape)
        tangent = _check_rule(f"Inverse of shape {shape}", Inverse.apply, [A], [V])
        Y = np.linalg.inv(A._array)
        assert_close(tangent, -Y @ V._array @ Y, f"Inverse of shape {shape}: -Y @ A_t @ Y", rtol=1e-9)
    A = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    V = torch.tensor([[1.0, 0.0], [0.0, 0.0]], dtype=torch.float64)
    tangent = _forward_tangent("Inverse with a non-symmetric A and tangent", Inverse.apply, [A], [V])
    Y = np.linalg.inv(A._array)
    assert_close(tangent, -Y @ V._array @ Y, "Inverse of [[1, 2], [3, 4]] along [[1, 0], [0, 0]] (the order of the "
                                             "products matters)", rtol=1e-9)
    _check_float32("Inverse on float32", Inverse.apply, [torch.tensor([[2.0, 0.5], [0.0, 1.0]])],
                   [torch.tensor([[1.0, 0.0], [1.0, 1.0]])])
    jf = call("torch.func.jacfwd of Inverse", func.jacfwd(Inverse.apply), A)
    jr = func.jacrev(_inverse_by_solve)(A)
    assert_close(jf, jr._array, "jacfwd(Inverse.apply)(A) against jacrev of an inverse built from engine ops",
                 rtol=1e-9)


def _inverse_by_solve(M):
    """The inverse of a 2 x 2 matrix from engine ops (adjugate over determinant): a reverse-mode oracle."""
    a, b, c, d = M[0, 0], M[0, 1], M[1, 0], M[1, 1]
    det = a * d - b * c
    return torch.stack([torch.stack([d, -b]), torch.stack([-c, a])]) / det
