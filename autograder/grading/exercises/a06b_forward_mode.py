"""Hidden checks of 06b_forward_mode (jvp rules of custom Functions), run by the judge.

The student's Function runs in forward mode in the student process (``cases``' ``tangent`` observer: the
primal, the tangent, whether the class's own ``jvp`` ran and whether ``apply`` was replaced). The expected
values are numpy's formulas, computed here: random shapes with broadcasting, inputs without a tangent,
extreme values, float32, and torch.func on top.
"""
import numpy as np

from ..judge import exercise, expect, expect_array


def _function_case(inputs, tangents, extra=(), dtype="float64"):
    return {"recipe": "function", "inputs": list(inputs), "tangents": list(tangents), "extra": list(extra),
            "dtype": dtype}


def expect_rule(student, name, what, case, primal, tangent, observe="tangent", tol=1e-6):
    """The student's ``name`` run in forward mode on ``case`` gives ``primal`` and ``tangent``, through its jvp."""
    got = student.call(name, case, observe=observe, what=what)
    expect(got["type"] != "not a Function", f"{what}: {name} is not a Function subclass")
    expect(not got["apply_replaced"], f"{what}: {name} redefines apply; forward mode must go through "
                                      "Function.apply and your jvp")
    expect(got["jvp_calls"] > 0, f"{what}: {name}.jvp never ran; forward mode must use your rule")
    expect(got["type"] == "Tensor", f"{what}: the output has no tangent (got {got['type']}); jvp must return the "
                                    "output's tangent")
    if primal is not None:
        expect_array(got["primal"], primal, f"{what}: the output's value", tol=tol)
    expect_array(got["value"], tangent, f"{what}: J v", tol=tol)
    return got


def expect_float32(student, name, what, inputs, tangents, extra=()):
    got = student.call(name, _function_case(inputs, tangents, extra, "float32"), observe="tangent", what=what)
    expect(got["type"] == "Tensor" and got["float32"], f"{what}: a float32 input's tangent should stay float32")


# ---- Exercise 1: Softplus --------------------------------------------------------------------------------------------

def _sigmoid(x):
    return 0.5 * (1 + np.tanh(x / 2))


@exercise("06b_forward_mode:softplus")
def softplus(student):
    rng = np.random.default_rng(61)
    for shape in ((5,), (2, 3), (), (2, 1, 3)):
        x, v = rng.uniform(-4.0, 4.0, shape), rng.uniform(-2.0, 2.0, shape)
        expect_rule(student, "Softplus", f"Softplus on shape {shape}", _function_case([x], [v]),
                    np.logaddexp(0, x), v * _sigmoid(x))
    x = np.array([-1000.0, -40.0, 0.0, 40.0, 1000.0])
    got = student.call("Softplus", _function_case([x], [np.ones(5)]), observe="tangent",
                       what="Softplus at x = [-1000, -40, 0, 40, 1000]")
    expect(got["value"] is not None and bool(np.all(np.isfinite(got["value"]))),
           f"Softplus at large |x|: the tangent is not finite: {got['value']} (sigmoid is stable, exp(x) / "
           "(1 + exp(x)) is not)")
    expect_array(got["value"], [0.0, np.exp(-40.0), 0.5, 1.0, 1.0], "Softplus at large |x|: tangent", tol=1e-9)
    expect_float32(student, "Softplus", "Softplus on float32", [np.array([0.5, -1.0])], [np.array([1.0, 2.0])])
    x, v = rng.uniform(-2.0, 2.0, 3), rng.uniform(-2.0, 2.0, 3)
    expect_rule(student, "Softplus", "torch.func.jvp(lambda t: Softplus.apply(t * 2).sum(), (x,), (v,))",
                _function_case([x], [v]), None, (2 * v * _sigmoid(2 * x)).sum(), observe="func_jvp", tol=1e-9)


# ---- Exercise 2: Atan2 -----------------------------------------------------------------------------------------------

ATAN2_SHAPES = (((4,), (4,)), ((3, 1), (4,)), ((2, 3), ()), ((), (5,)), ((2, 1, 3), (4, 1)))


def _atan2_tangent(y, x, yt, xt):
    return (x * yt - y * xt) / (x * x + y * y)


@exercise("06b_forward_mode:atan2")
def atan2(student):
    rng = np.random.default_rng(62)
    for y_shape, x_shape in ATAN2_SHAPES:
        y = rng.uniform(-2.0, 2.0, y_shape)
        x = rng.uniform(0.3, 2.0, x_shape) * rng.choice([-1.0, 1.0], x_shape)  # away from the origin
        yt, xt = rng.uniform(-2.0, 2.0, y_shape), rng.uniform(-2.0, 2.0, x_shape)
        what = f"Atan2 of y {y_shape} and x {x_shape}"
        shape = np.broadcast_shapes(y_shape, x_shape)
        for label, ty, tx in (("", yt, xt), (", only y has a tangent", yt, None), (", only x has a tangent", None, xt)):
            expected = _atan2_tangent(y, x, 0 * yt if ty is None else yt, 0 * xt if tx is None else xt)
            expect_rule(student, "Atan2", what + label, _function_case([y, x], [ty, tx]), np.arctan2(y, x),
                        np.broadcast_to(expected, shape))
    expect_float32(student, "Atan2", "Atan2 on float32", [np.array([1.0, -1.0]), np.array([0.5, 2.0])],
                   [np.array([1.0, 1.0]), np.array([0.0, 1.0])])
    y, x = rng.uniform(-2.0, 2.0, 3), rng.uniform(0.5, 2.0, 3)
    expect_rule(student, "Atan2", "jacfwd(lambda y: Atan2.apply(y, x))(y)", _function_case([y, x], [None, None]),
                None, np.diag(x / (x ** 2 + y ** 2)), observe="jacfwd", tol=1e-9)


# ---- Exercise 3: Normalize -------------------------------------------------------------------------------------------

NORMALIZE_CASES = (((4,), 0), ((2, 3), 1), ((2, 3), 0), ((2, 3, 4), -1), ((3, 2, 2), 1), ((1, 5), -2))


def _normalize(x, v, dim):
    r = np.sqrt((x * x).sum(dim, keepdims=True))
    return x / r, v / r - x * (x * v).sum(dim, keepdims=True) / r ** 3


@exercise("06b_forward_mode:normalize")
def normalize(student):
    rng = np.random.default_rng(63)
    for shape, dim in NORMALIZE_CASES:
        x, v = rng.uniform(-2.0, 2.0, shape), rng.uniform(-2.0, 2.0, shape)
        expect_rule(student, "Normalize", f"Normalize of shape {shape} along dim {dim}",
                    _function_case([x], [v], [dim]), *_normalize(x, v, dim))
    x = rng.uniform(-2.0, 2.0, (2, 3))
    expect_rule(student, "Normalize", "Normalize, x moving along itself (scaling x leaves x / |x| unchanged)",
                _function_case([x], [3 * x], [1]), None, np.zeros((2, 3)), tol=1e-9)
    expect_float32(student, "Normalize", "Normalize on float32", [np.array([3.0, 4.0])], [np.array([1.0, 0.0])], [0])


# ---- Exercise 4: Inverse ---------------------------------------------------------------------------------------------

@exercise("06b_forward_mode:inverse")
def inverse(student):
    rng = np.random.default_rng(64)
    for shape in ((2, 2), (3, 3), (4, 4), (2, 3, 3), (2, 2, 2, 2), (1, 1)):
        A = rng.uniform(-1.0, 1.0, shape) + 3 * np.eye(shape[-1])
        V = rng.uniform(-2.0, 2.0, shape)
        Y = np.linalg.inv(A)
        expect_rule(student, "Inverse", f"Inverse of shape {shape}", _function_case([A], [V]), Y, -Y @ V @ Y)
    A, V = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.0, 0.0], [0.0, 0.0]])
    Y = np.linalg.inv(A)
    expect_rule(student, "Inverse", "Inverse of [[1, 2], [3, 4]] along [[1, 0], [0, 0]] (the order of the products "
                "matters)", _function_case([A], [V]), Y, -Y @ V @ Y, tol=1e-9)
    expect_float32(student, "Inverse", "Inverse on float32", [np.array([[2.0, 0.5], [0.0, 1.0]])],
                   [np.array([[1.0, 0.0], [1.0, 1.0]])])
    jacobian = -np.einsum("ik,lj->ijkl", Y, Y)  # d Y_ij / d A_kl
    expect_rule(student, "Inverse", "jacfwd(Inverse.apply)(A)", _function_case([A], [None]), None, jacobian,
                observe="jacfwd", tol=1e-9)
