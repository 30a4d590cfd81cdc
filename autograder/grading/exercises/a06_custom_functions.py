"""Hidden checks of 06_custom_functions (Functions with non-tensor arguments, stable formulas,
needs_input_grad, second derivatives, and a gradient checker of the student's own), run by the judge.

Inputs are written out (arrays, numbers, strings) or named by number (``cases.check_grad_case_06``); the
student's Function runs in the student process (``cases``' observers): its value, what its backward returned,
the gradients through the engine for random ``grad_output`` and, for Swish, the second derivatives, as data.
The judge's answers come from numpy's formulas and, for Swish, from chibigrad's engine on ``x * sigmoid(beta
* x)`` written with its own operations; check_grad's from a Jacobian comparison computed here.
"""
import numpy as np

import chibigrad as torch
from chibigrad.autograd.node import FREED_MESSAGE

from .. import cases
from ..judge import exercise, expect, expect_array

INPLACE_MESSAGE = "modified by an inplace operation"  # part of the engine's error for a saved tensor changed in place


def tensor(array, grad=True):
    """A tensor argument, as the recipe writes it."""
    return {"tensor": np.asarray(array, dtype=np.float64), "grad": grad}


def function_case(args, weights=None, second=None, dtype="float64", raw=True, forbid=None):
    return {"recipe": "case_06", "args": list(args), "weights": weights, "second": second, "dtype": dtype,
            "raw": raw, "forbid": forbid}


def expect_function(got, what, name, n_args):
    """A Tensor whose grad_fn is ``<name>Backward``, backward returning one value per argument of forward."""
    expect(got["type"] == "Tensor", f"{what} must return a Tensor, got {got['type']}")
    expect(got["grad_fn"] == f"{name}Backward", f"{what}: the result's grad_fn should be {name}Backward, got "
                                                f"{got['grad_fn']}")
    expect(got["own_node"], f"{what}: the result's grad_fn was not made by {name}.apply, so backward never runs "
                            "(write forward and backward; do not redefine apply)")
    raw = got["raw"]
    if raw is not None:
        expect(len(raw) == n_args, f"{what}: backward returned {len(raw)} values for forward's {n_args} arguments")
    return raw


def kind(value):
    """What the student process returned, in the student's terms: a tensor crosses as its array."""
    return "a Tensor" if isinstance(value, np.ndarray) else "None" if value is None else \
        f"a {value[-1]}" if isinstance(value, tuple) else repr(value)


def expect_raw(raw, k, shape, what, name, hint=""):
    """backward's own value for argument ``k`` (named ``name``) is a Tensor of ``shape``."""
    r = raw[k]
    expect(r is not None, f"{what}: backward returned None for {name}, which needs a gradient")
    if not isinstance(r, np.ndarray):  # ("@other", type name)
        raise AssertionError(f"{what}: backward returned {kind(r)} for {name}, expected a Tensor")
    expect(r.shape == shape, f"{what}: the gradient for {name} must have its shape {shape}, got {r.shape}{hint}")
    return r


def expect_grads(got, expected, what, tol=1e-8):
    """The engine's gradients of the inputs that require grad, in order, against ``expected``."""
    grads = got["grads"]
    expect(len(grads) == len(expected), f"{what}: {len(grads)} gradients, expected {len(expected)}")
    for k, (g, (name, e)) in enumerate(zip(grads, expected)):
        expect(g is not None, f"{what}: {name} got no gradient (None), but it requires grad")
        expect_array(g, e, f"{what}: gradient of {name} (shape {np.shape(e)})", tol=tol)


def expect_saved(student, name, args, change, expected, what):
    """Tensors kept with save_for_backward: freed by backward, and after argument ``change`` was changed in place
    after forward, backward raises the engine's error or (an intermediate was saved) still gives ``expected``,
    the gradients of the sum at the values forward saw."""
    got = student.call(name, {"recipe": "case_06", "args": args, "change": change}, observe="saved_06",
                       what=f"{what}, backward twice and after an in-place change")
    expect(got["freed"] is not None,
           f"{what}: a second backward through a freed graph worked. Keep tensors with ctx.save_for_backward "
           "(read them with ctx.saved_tensors): backward frees those, attributes like ctx.x it cannot free.")
    expect(got["freed"] == f"RuntimeError: {FREED_MESSAGE}"[:500], f"{what}: a second backward raised "
           f"{got['freed']}, expected the engine's 'Trying to backward through the graph a second time' error")
    if got["inplace"] is not None:
        expect(got["inplace"].startswith("RuntimeError") and INPLACE_MESSAGE in got["inplace"],
               f"{what}: backward after an in-place change of an input raised {got['inplace']}, expected the "
               f"'{INPLACE_MESSAGE}' error")
        return
    for g, e in zip(got["inplace_grads"], expected):
        expect(g is not None and np.allclose(g, e, rtol=1e-8, atol=1e-8),
               f"{what}: backward ran although an input was changed in place after forward, and used the changed "
               "values. Keep tensors with ctx.save_for_backward: it checks their version; attributes like ctx.x are "
               "not checked.")


# ---- Exercise 1: Swish ----------------------------------------------------------------------------------------------

SWISH_CASES = (((3,), ()), ((2, 3), ()), ((2, 3), (3,)), ((4, 2), (4, 1)), ((), ()), ((5,), 0.7), ((2, 2), -1.3))
SECOND_HINT = ("second derivatives are wrong (gradgradcheck fails). Compute sigmoid(beta * x) in backward from the "
               "saved inputs with tensor operations (not numpy, not under @once_differentiable): a tensor computed in "
               "forward and saved is a constant to create_graph, so its dependence on x and beta is lost.")


def swish_derivatives(x, beta, weights, second):
    """chibigrad's engine on ``x * sigmoid(beta * x)`` (its own operations): the gradients for ``grad_output =
    weights`` and the derivatives of sum(gradient k * second[k]) with respect to x (and beta) and weights."""
    xt = torch.tensor(x, requires_grad=True)
    bt = torch.tensor(beta, requires_grad=True) if isinstance(beta, np.ndarray) else beta
    wt = torch.tensor(weights, requires_grad=True)
    inputs = [xt] + ([bt] if isinstance(beta, np.ndarray) else [])
    grads = torch.autograd.grad(xt * torch.sigmoid(bt * xt), inputs, wt, create_graph=True)
    total = sum((g * torch.tensor(v)).sum() for g, v in zip(grads, second))
    again = torch.autograd.grad(total, inputs + [wt], allow_unused=True)
    read = lambda t, like: np.zeros(np.shape(like)) if t is None else t.detach().numpy()  # noqa: E731
    return [g.detach().numpy() for g in grads], [read(g, a) for g, a in zip(again, inputs + [wt])]


@exercise("06_custom_functions:swish")
def swish(student):
    """Four named cases (partial credit): float64 values and first derivatives on every shape, second derivatives
    (graded once the first are right), float32, and what save_for_backward owes the engine."""
    rng = np.random.default_rng(6)
    firsts = []  # (what, got, expected second derivatives, beta is a number) of every shape whose first ones passed
    with student.case(f"float64 values and first derivatives ({len(SWISH_CASES)} shapes)", 2):
        for x_shape, beta_shape in SWISH_CASES:
            x = rng.uniform(-2.0, 2.0, x_shape)
            number = not isinstance(beta_shape, tuple)
            beta = beta_shape if number else rng.uniform(0.5, 2.0, beta_shape)
            what = (f"Swish.apply(x of shape {x_shape}, "
                    + (f"beta={beta})" if number else f"beta of shape {beta_shape})"))
            weights = rng.standard_normal(np.broadcast_shapes(x_shape, np.shape(beta)))
            second = [rng.standard_normal(x_shape)] + ([] if number else [rng.standard_normal(beta_shape)])
            got = student.call("Swish", function_case([tensor(x), beta if number else tensor(beta)], weights, second),
                               observe="function_06", what=what)
            expect(got["type"] == "Tensor", f"{what} must return a Tensor, got {got['type']}")
            expect_array(got["value"], x / (1 + np.exp(-beta * x)), f"{what}: forward")
            raw = expect_function(got, what, "Swish", 2)
            expect_raw(raw, 0, x_shape, what, "x")
            if number:
                expect(raw[1] is None,
                       f"{what}: beta is a Python number, its gradient must be None, got {kind(raw[1])}")
            else:
                expect_raw(raw, 1, beta_shape, what, "beta", " (sum it with sum_to_size)")
            ones, _ = swish_derivatives(x, beta, np.ones_like(weights), second)
            for r, e, name in zip(raw, ones, ("x", "beta")):
                expect_array(r, e, f"{what}: what backward returned for {name} (grad_output = ones)")
            first, again = swish_derivatives(x, beta, weights, second)
            expect_grads(got, list(zip(("x", "beta"), first)), what)
            firsts.append((what, got, again, number))
    with student.case("second derivatives (what gradgradcheck checks)"):
        expect(len(firsts) == len(SWISH_CASES), "not graded until the first derivatives are right")
        for what, got, again, number in firsts:
            expect(got["second_error"] is None, f"{what}: {SECOND_HINT} (the second backward raised "
                                                f"{got['second_error']})")
            for g, e, name in zip(got["second"], again, ["x"] + ([] if number else ["beta"]) + ["grad_output"]):
                try:
                    expect_array(g, e, f"d/d{name} of the first derivatives")
                except AssertionError as err:
                    raise AssertionError(f"{what}: {SECOND_HINT}\n{err}") from None
    with student.case("float32 in, float32 out"):
        got = student.call("Swish", function_case([tensor([0.5, -1.0], grad=False), tensor(1.0)], dtype="float32",
                                                  raw=False), observe="function_06", what="Swish on float32 tensors")
        expect(got["type"] == "Tensor" and got["dtype"] == str(torch.float32),
               f"Swish of float32 tensors should be float32, got {got.get('dtype', got['type'])}")
    with student.case("tensors kept with save_for_backward (freed by backward, version-checked)"):
        x, beta = rng.uniform(-2.0, 2.0, 3), rng.uniform(0.5, 2.0, ())
        expected, _ = swish_derivatives(x, beta, np.ones(3), [np.zeros(3), np.zeros(())])
        expect_saved(student, "Swish", [tensor(x), tensor(beta)], 0, expected, "Swish")


# ---- Exercise 2: LogSumExp ------------------------------------------------------------------------------------------

LSE_CASES = (((4,), 0), ((2, 3), 1), ((2, 3), 0), ((2, 3), -1), ((2, 3, 4), 1), ((2, 3, 4), -3), ((1, 5), 1))
LSE_EXTREME = (
    ("x = 1000 everywhere", [[1000.0, 1000.0, 1000.0], [999.0, 1000.0, 1001.0]], None),
    ("x = -1000 everywhere", [[-1000.0, -1000.0, -1000.0], [-1001.0, -1000.0, -999.0]], None),
    ("rows of very different sizes", [[800.0, -800.0, 0.0], [-900.0, -901.0, -902.0]], None),
    ("large x and weights", [[700.0, 710.0, 705.0], [-700.0, -710.0, -705.0]], [[0.5, 2.0, 1.0], [3.0, 0.1, 1.0]]),
    ("a weight 0 on the largest x", [[1000.0, 0.0, -1.0], [5.0, 900.0, 2.0]], [[0.0, 1.0, 2.0], [1.0, 0.0, 1.0]]),
    ("some weights 0", [[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], [[1.0, 0.0, 1.0], [0.0, 0.0, 4.0]]),
)


def lse(x, b, dim):
    """numpy's stable reduction: log(sum(b * exp(x))) over ``dim``."""
    with np.errstate(divide="ignore"):
        return np.logaddexp.reduce(x if b is None else x + np.log(b), axis=dim)


def lse_grads(x, b, dim, weights):
    """The gradients for x and for b (None without weights) for ``grad_output = weights``."""
    out, w = np.expand_dims(lse(x, b, dim), dim), np.expand_dims(weights, dim)
    with np.errstate(divide="ignore"):
        return w * np.exp(x + (0 if b is None else np.log(b)) - out), None if b is None else w * np.exp(x - out)


def expect_lse(student, what, x, b, dim, weights, b_grad=True, raw=True):
    """LogSumExp.apply(x, b, dim): a finite forward equal to numpy's and, for ``grad_output = weights``, finite
    gradients equal to the formulas (to 1e-9: a stable formula is exact in float64)."""
    args = [tensor(x), None if b is None else tensor(b, grad=b_grad), dim]
    got = student.call("LogSumExp", function_case(args, weights, raw=raw, forbid="logsumexp"),
                       observe="function_06", what=what)
    expect(got["type"] == "Tensor", f"{what} must return a Tensor, got {got['type']}")
    expect(bool(np.all(np.isfinite(got["value"]))), f"{what}: got {got['value']}, which is not finite: subtract the "
                                                     "maximum of x + log(b) before exp (and add it back after log)")
    expect_array(got["value"], lse(x, b, dim), f"{what}: forward", tol=1e-9)
    expect(got["grad_fn"] is not None, f"{what}: the result has no grad_fn")
    gx, gb = lse_grads(x, b, dim, weights)
    expect(got["grads"][0] is None or bool(np.all(np.isfinite(got["grads"][0]))),
           f"{what}: the gradient for x has inf or nan: {got['grads'][0]}")
    expect_grads(got, [("x", gx)] + ([("b", gb)] if b is not None and b_grad else []), what, tol=1e-9)
    return got


@exercise("06_custom_functions:logsumexp")
def logsumexp(student):
    rng = np.random.default_rng(7)
    for shape, dim in LSE_CASES:
        for weighted in (False, True):
            x = rng.uniform(-3.0, 3.0, shape)
            b = rng.uniform(0.2, 2.0, shape) if weighted else None
            what = f"LogSumExp.apply(x of shape {shape}, {'b' if weighted else 'None'}, dim={dim})"
            weights = rng.standard_normal(tuple(np.delete(shape, dim % len(shape))))
            got = expect_lse(student, what, x, b, dim, weights)
            raw = expect_function(got, what, "LogSumExp", 3)
            expect(raw[2] is None, f"{what}: dim is a number, its gradient must be None")
            if not weighted:
                expect(raw[1] is None, f"{what}: b is None, so its gradient must be None")
            for k, (name, e) in enumerate(zip("xb", lse_grads(x, b, dim, np.ones_like(weights)))):
                if e is not None:
                    r = expect_raw(raw, k, shape, what, name, " (unsqueeze grad and out at dim)")
                    expect_array(r, e, f"{what}: what backward returned for {name} (grad_output = ones)", tol=1e-9)
    for case, xs, bs in LSE_EXTREME:
        expect_lse(student, f"LogSumExp on {case}", np.array(xs), None if bs is None else np.array(bs), 1,
                   np.array([0.5, -2.0]), b_grad=False, raw=False)
    what = "LogSumExp with weights that need no gradient"
    got = student.call("LogSumExp", function_case([tensor(rng.uniform(-2.0, 2.0, (2, 3))),
                                                   tensor(rng.uniform(0.2, 2.0, (2, 3)), grad=False), 1],
                                                  forbid="logsumexp"), observe="function_06", what=what)
    raw = expect_function(got, what, "LogSumExp", 3)
    expect(raw[1] is None, f"{what}: backward must return None for b (ctx.needs_input_grad[1] is False)")
    what = "LogSumExp with an x that needs no gradient (only b does)"
    got = student.call("LogSumExp", function_case([tensor(rng.uniform(-2.0, 2.0, (2, 3)), grad=False),
                                                   tensor(rng.uniform(0.2, 2.0, (2, 3))), 1], forbid="logsumexp"),
                       observe="function_06", what=what)
    raw = expect_function(got, what, "LogSumExp", 3)
    expect(raw[0] is None, f"{what}: backward must return None for x (ctx.needs_input_grad[0] is False)")
    expect(raw[1] is not None, f"{what}: b still needs its gradient")
    got = student.call("LogSumExp", function_case([tensor([[1.0, 2.0]]), None, 1], dtype="float32", raw=False,
                                                  forbid="logsumexp"), observe="function_06",
                       what="LogSumExp on float32")
    expect(got["type"] == "Tensor" and got["dtype"] == str(torch.float32),
           f"LogSumExp of a float32 tensor should be float32, got {got.get('dtype', got['type'])}")
    x, b = rng.uniform(-2.0, 2.0, (2, 3)), rng.uniform(0.2, 2.0, (2, 3))
    expect_saved(student, "LogSumExp", [tensor(x), tensor(b), 1], 0, lse_grads(x, b, 1, np.ones(2)), "LogSumExp")


# ---- Exercise 3: LogCosh --------------------------------------------------------------------------------------------

def logcosh_values(d):
    return np.logaddexp(d, -d) - np.log(2)


def reduced(values, reduction):
    return values.mean() if reduction == "mean" else values.sum() if reduction == "sum" else values


@exercise("06_custom_functions:logcosh")
def logcosh(student):
    rng = np.random.default_rng(8)
    for shape in [(3,), (2, 3), (), (4, 1, 2)]:
        for reduction in ("mean", "sum", "none"):
            pred, target = rng.uniform(-3, 3, shape), rng.uniform(-3, 3, shape)
            what = f"LogCosh.apply(pred, target of shape {shape}, {reduction!r})"
            weights = rng.standard_normal(shape if reduction == "none" else ())
            got = student.call("LogCosh", function_case([tensor(pred), tensor(target), reduction], weights),
                               observe="function_06", what=what)
            expect(got["type"] == "Tensor", f"{what} must return a Tensor, got {got['type']}")
            expect_array(got["value"], reduced(logcosh_values(pred - target), reduction), f"{what}: forward")
            raw = expect_function(got, what, "LogCosh", 3)
            expect(raw[2] is None, f"{what}: reduction is a string, its gradient must be None")
            slope = np.tanh(pred - target) / (np.size(pred) if reduction == "mean" else 1)
            for k, (name, sign) in enumerate((("pred", 1), ("target", -1))):
                r = expect_raw(raw, k, shape, what, name)
                expect_array(r, sign * slope, f"{what}: what backward returned for {name} (grad_output = ones)")
            expect_grads(got, [("pred", weights * slope), ("target", -weights * slope)], what)
    for d in ([800.0, -800.0, 0.0], [750.5, -1e4, 3.0]):
        what = f"LogCosh of d = {d}"
        got = student.call("LogCosh", function_case([tensor(d), tensor(np.zeros(3), grad=False), "none"], np.ones(3),
                                                    raw=False), observe="function_06", what=what)
        expect(got["type"] == "Tensor", f"{what} must return a Tensor, got {got['type']}")
        expect(bool(np.all(np.isfinite(got["value"]))), f"{what}: got {got['value']}: cosh overflows, use "
                                                         "|d| + log(1 + exp(-2|d|)) - log 2")
        expect_array(got["value"], logcosh_values(np.array(d)), f"{what}: forward", tol=1e-12)
        expect(got["grads"] is not None, f"{what}: the result has no grad_fn")
        expect_grads(got, [("pred", np.tanh(d))], what)
    for needs in ((True, False), (False, True)):
        pred, target = rng.uniform(-2.0, 2.0, (2, 3)), rng.uniform(-2.0, 2.0, (2, 3))
        which = "only pred" if needs[0] else "only target"
        for reduction in ("mean", "none"):
            what = f"LogCosh with {which} requiring grad, reduction {reduction!r}"
            got = student.call("LogCosh", function_case([tensor(pred, needs[0]), tensor(target, needs[1]), reduction]),
                               observe="function_06", what=what)
            raw = expect_function(got, what, "LogCosh", 3)
            for k, name in enumerate(("pred", "target")):
                if not needs[k]:
                    expect(raw[k] is None, f"{what}: {name} needs no gradient (ctx.needs_input_grad[{k}] is False): "
                                           f"backward must return None for it, got {kind(raw[k])}")
                    continue
                r = expect_raw(raw, k, (2, 3), what, name)
                slope = (1.0 if k == 0 else -1.0) * np.tanh(pred - target) / (6 if reduction == "mean" else 1)
                expect_array(r, slope, f"{what}: the gradient for {name}")
    got = student.call("LogCosh", function_case([tensor([0.5, 1.0]), tensor([0.0, 0.0], grad=False), "mean"],
                                                dtype="float32", raw=False), observe="function_06",
                       what="LogCosh on float32")
    expect(got["type"] == "Tensor" and got["dtype"] == str(torch.float32),
           f"LogCosh of float32 tensors should be float32, got {got.get('dtype', got['type'])}")
    pred, target = rng.uniform(-2.0, 2.0, 3), rng.uniform(-2.0, 2.0, 3)
    expect_saved(student, "LogCosh", [tensor(pred), tensor(target, grad=False), "sum"], 0, [np.tanh(pred - target)],
                 "LogCosh")


# ---- Exercise 4: check_grad ------------------------------------------------------------------------------------------

RIGHT_BACKWARDS = 6  # check_grad_case_06(0 ... 5) have right backwards (errors ~0); the others, the oracle's


def jacobian_errors(fn, inputs, eps):
    """Per input: max |engine Jacobian - central-difference Jacobian| (numpy, float64), None for an input that is
    not a tensor requiring grad."""
    out = fn(*inputs)
    errors = []
    for i, x in enumerate(inputs):
        if not (isinstance(x, torch.Tensor) and x.requires_grad):
            errors.append(None)
            continue
        analytical = np.zeros((out.numel(), x.numel()))
        for j in range(out.numel()):
            one_hot = np.zeros(tuple(out.shape))
            one_hot.flat[j] = 1
            (g,) = torch.autograd.grad(out, [x], torch.tensor(one_hot, dtype=out.dtype), retain_graph=True,
                                       allow_unused=True)
            if g is not None:
                analytical[j] = g.numpy().ravel()
        numerical = np.zeros_like(analytical)
        for k in range(x.numel()):
            values = []
            for step in (eps, -eps):
                moved = np.array(x.detach().numpy(), copy=True)
                moved.flat[k] += step
                args = list(inputs)
                args[i] = torch.tensor(moved)
                with torch.no_grad():
                    values.append(np.asarray(fn(*args).numpy(), dtype=np.float64).ravel())
            numerical[:, k] = (values[0] - values[1]) / (2 * eps)
        errors.append(float(np.abs(analytical - numerical).max(initial=0.0)))
    return errors


@exercise("06_custom_functions:check_grad", forbids=("gradcheck", "gradgradcheck"))
def check_grad(student):
    for index in range(cases.CHECK_GRADS_06):
        case, fn, inputs, eps = cases.check_grad_case_06(index)
        what = f"check_grad on {case}"
        expected = jacobian_errors(fn, inputs, eps)
        got = student.call("check_grad", {"recipe": "case_06", "case": index, "forbid": "gradcheck"},
                           observe="check_grad_06", what=what)
        value = got["value"]
        expect(value is not None and len(value) == len(inputs),
               f"{what}: expected a list with one entry per input ({len(inputs)}), got a {got['type']}"
               + ("" if value is None else f" of {len(value)}"))
        expect(got["unchanged"], f"{what}: an input's values changed; perturb copies, or put every element back "
                                 "exactly")
        expect(not got["grad_set"], f"{what}: an input's .grad was set; use torch.autograd.grad, not backward")
        for k, (g, e) in enumerate(zip(value, expected)):
            if e is None:
                expect(g is None, f"{what}: input {k} is not a tensor that requires grad, expected None, got {kind(g)}")
                continue
            expect(isinstance(g, float), f"{what}: input {k}: expected a float, got {kind(g)}")
            if index < RIGHT_BACKWARDS:
                expect(0 <= g < 1e-6, f"{what}: input {k}: the backward is right, but check_grad reports an error of "
                                      f"{g:.3g}. Use central differences (f(x + eps) - f(x - eps)) / (2 eps): a "
                                      "one-sided difference is off by about eps * f'' / 2.")
            else:
                expect(abs(g - e) <= 1e-9 + 1e-4 * e,
                       f"{what}: input {k}: check_grad reports {g:.6g}, but the largest difference between the "
                       f"backward's Jacobian and central differences is {e:.6g}. Compare every output element "
                       "separately (one one-hot grad_outputs per element), not only their sum.")
