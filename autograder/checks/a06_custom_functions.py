"""Hidden tests of assignment 06_custom_functions: Functions with non-tensor arguments, stable
formulas, needs_input_grad, second derivatives, and a gradient checker of the student's own."""
import importlib

import numpy as np

import chibigrad as torch
from chibigrad.autograd import gradgradcheck
from chibigrad.ops import reduction

from . import assert_close, call, expect, forbidden, gradient_check
from .contract import expect_freed, expect_version_checked, raw_backward

gradcheck_module = importlib.import_module("chibigrad.autograd.gradcheck")  # the package exports the function


def _tensor(rng, shape, low=-2.0, high=2.0, dtype=torch.float64, requires_grad=True):
    return torch.tensor(rng.uniform(low, high, shape), dtype=dtype, requires_grad=requires_grad)


def _check_saved_properly(name, make):
    """Tensors kept with save_for_backward: freed by backward, version-checked against in-place changes.
    ``make(change)`` applies a Function to leaves, then ``change`` to its first input (under no_grad)."""
    out = make(None)
    out.sum().backward()
    expect_freed(name, lambda: out.sum().backward(),
                 f"{name}: a second backward through a freed graph worked. Keep tensors with ctx.save_for_backward "
                 "(read them with ctx.saved_tensors): backward frees those, attributes like ctx.x it cannot free.")
    out = make(lambda t: t.mul_(2))  # changes an input after forward
    expect_version_checked(name, lambda: out.sum().backward(),
                           f"{name}: backward ran although an input was changed in place after forward, so it used "
                           "the changed values. Keep tensors with ctx.save_for_backward: it checks their version; "
                           "attributes like ctx.x are not checked.")


# ---- Exercise 1: Swish ----------------------------------------------------------------------------------------------

def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


SWISH_CASES = (((3,), ()), ((2, 3), ()), ((2, 3), (3,)), ((4, 2), (4, 1)), ((), ()), ((5,), 0.7), ((2, 2), -1.3))


def check_swish(Swish):
    rng = np.random.default_rng(6)
    for x_shape, beta_shape in SWISH_CASES:
        x = _tensor(rng, x_shape)
        number = not isinstance(beta_shape, tuple)
        beta = beta_shape if number else _tensor(rng, beta_shape, 0.5, 2.0)
        case = f"Swish.apply(x of shape {x_shape}, " + (f"beta={beta})" if number else f"beta of shape {beta_shape})")
        out = call(case, Swish.apply, x, beta)
        expect(isinstance(out, torch.Tensor), f"{case} must return a Tensor, got {type(out).__name__}")
        b = beta if number else beta._array
        assert_close(out, x._array * _sigmoid(b * x._array), f"{case}: forward")
        expect(out.grad_fn is not None and out.grad_fn.name() == "SwishBackward",
               f"{case}: the result's grad_fn should be SwishBackward, got {out.grad_fn}")
        raw = raw_backward("Swish.backward", out)
        expect(len(raw) == 2, f"{case}: backward returned {len(raw)} values for forward's 2 arguments (x, beta)")
        if number:
            expect(raw[1] is None, f"{case}: beta is a Python number, its gradient must be None, got "
                                   f"{type(raw[1]).__name__}")
        else:
            expect(raw[1] is not None and tuple(raw[1].shape) == beta_shape,
                   f"{case}: the gradient for beta must have beta's shape {beta_shape} (sum it with "
                   f"sum_to_size), got {None if raw[1] is None else tuple(raw[1].shape)}")
        inputs = [x] if number else [x, beta]
        fn = (lambda t, b=beta: Swish.apply(t, b)) if number else Swish.apply
        gradient_check(case, fn, inputs, seed=len(x_shape))
        ok = call(f"second derivatives of {case} (gradgradcheck)", gradgradcheck, fn, tuple(inputs),
                  raise_exception=False)
        expect(ok, f"{case}: second derivatives are wrong (gradgradcheck fails). Compute sigmoid(beta * x) in "
                   "backward from the saved inputs with tensor operations (not numpy, not under @once_differentiable): "
                   "a tensor computed in forward and saved is a constant to create_graph, so its dependence on x "
                   "and beta is lost.")
    beta = torch.tensor(1.0, requires_grad=True)
    x32 = torch.tensor([0.5, -1.0])
    out = call("Swish on float32 tensors", Swish.apply, x32, beta)
    expect(out.dtype == torch.float32, f"Swish of float32 tensors should be float32, got {out.dtype}")

    def make(change):
        x = _tensor(rng, (3,))
        out = Swish.apply(x, _tensor(rng, (), 0.5, 2.0))
        if change:
            with torch.no_grad():
                change(x)
        return out
    _check_saved_properly("Swish", make)


# ---- Exercise 2: LogSumExp ------------------------------------------------------------------------------------------

LSE_YOURSELF = ("write the stable log-sum-exp yourself: do not call chibigrad's logsumexp or log_softmax "
                "(torch.logsumexp, Tensor.logsumexp, log_softmax)")
LSE_CASES = (((4,), 0), ((2, 3), 1), ((2, 3), 0), ((2, 3), -1), ((2, 3, 4), 1), ((2, 3, 4), -3), ((1, 5), 1))


def _lse(x, b, dim):
    """numpy's stable reduction, the oracle: log(sum(b * exp(x)))."""
    with np.errstate(divide="ignore"):
        return np.logaddexp.reduce(x if b is None else x + np.log(b), axis=dim)


def _check_lse_value(LogSumExp, case, x, b, dim):
    out = call(case, LogSumExp.apply, x, b, dim)
    expect(isinstance(out, torch.Tensor), f"{case} must return a Tensor, got {type(out).__name__}")
    expect(bool(np.all(np.isfinite(out._array))), f"{case}: got {out._array}, which is not finite: subtract the "
                                                   "maximum of x + log(b) before exp (and add it back after log)")
    assert_close(out, _lse(x._array, None if b is None else b._array, dim), f"{case}: forward", rtol=1e-9)
    return out


def check_logsumexp(LogSumExp):
    blocked = [reduction.LogSumExp.forward, reduction.LogSoftmax.forward]
    with forbidden(blocked, LSE_YOURSELF):
        _check_logsumexp(LogSumExp)


def _check_logsumexp(LogSumExp):
    rng = np.random.default_rng(7)
    for shape, dim in LSE_CASES:
        for weighted in (False, True):
            x = _tensor(rng, shape, -3.0, 3.0)
            b = _tensor(rng, shape, 0.2, 2.0) if weighted else None
            case = f"LogSumExp.apply(x of shape {shape}, {'b' if weighted else 'None'}, dim={dim})"
            out = _check_lse_value(LogSumExp, case, x, b, dim)
            expect(out.grad_fn is not None and out.grad_fn.name() == "LogSumExpBackward",
                   f"{case}: the result's grad_fn should be LogSumExpBackward, got {out.grad_fn}")
            raw = raw_backward("LogSumExp.backward", out)
            expect(len(raw) == 3, f"{case}: backward returned {len(raw)} values for forward's 3 arguments")
            expect(raw[2] is None, f"{case}: dim is a number, its gradient must be None")
            if not weighted:
                expect(raw[1] is None, f"{case}: b is None, so its gradient must be None")
            for k, r in enumerate(raw[:2 if weighted else 1]):
                expect(r is not None and tuple(r.shape) == shape,
                       f"{case}: the gradient for {'xb'[k]} must have its shape {shape}, got "
                       f"{None if r is None else tuple(r.shape)} (unsqueeze grad and out at dim)")
            inputs = [x, b] if weighted else [x]
            fn = (lambda x, b, d=dim: LogSumExp.apply(x, b, d)) if weighted else \
                (lambda x, d=dim: LogSumExp.apply(x, None, d))
            gradient_check(case, fn, inputs, seed=dim + 3)
    extreme = [
        ("x = 1000 everywhere", [[1000.0, 1000.0, 1000.0], [999.0, 1000.0, 1001.0]], None),
        ("x = -1000 everywhere", [[-1000.0, -1000.0, -1000.0], [-1001.0, -1000.0, -999.0]], None),
        ("rows of very different sizes", [[800.0, -800.0, 0.0], [-900.0, -901.0, -902.0]], None),
        ("large x and weights", [[700.0, 710.0, 705.0], [-700.0, -710.0, -705.0]], [[0.5, 2.0, 1.0], [3.0, 0.1, 1.0]]),
        ("a weight 0 on the largest x", [[1000.0, 0.0, -1.0], [5.0, 900.0, 2.0]], [[0.0, 1.0, 2.0], [1.0, 0.0, 1.0]]),
        ("some weights 0", [[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], [[1.0, 0.0, 1.0], [0.0, 0.0, 4.0]]),
    ]
    for what, xs, bs in extreme:
        x = torch.tensor(xs, dtype=torch.float64, requires_grad=True)
        b = None if bs is None else torch.tensor(bs, dtype=torch.float64)
        case = f"LogSumExp on {what}"
        out = _check_lse_value(LogSumExp, case, x, b, 1)
        grad = torch.tensor([0.5, -2.0], dtype=torch.float64)
        (gx,) = call(f"backward of {case}", torch.autograd.grad, out, [x], grad)
        xa, ba = x._array, np.ones_like(x._array) if b is None else b._array
        with np.errstate(divide="ignore"):
            expected = grad._array[:, None] * np.exp(xa + np.log(ba) - out._array[:, None])
        expect(bool(np.all(np.isfinite(gx._array))), f"{case}: the gradient for x has inf or nan: {gx._array}")
        assert_close(gx, expected, f"{case}: gradient for x", rtol=1e-9)
    x, b = _tensor(rng, (2, 3)), _tensor(rng, (2, 3), 0.2, 2.0, requires_grad=False)
    out = call("LogSumExp with weights that need no gradient", LogSumExp.apply, x, b, 1)
    raw = raw_backward("LogSumExp.backward", out)
    expect(raw[1] is None, "LogSumExp with weights that need no gradient: backward must return None for b "
                           "(ctx.needs_input_grad[1] is False)")
    x, b = _tensor(rng, (2, 3), requires_grad=False), _tensor(rng, (2, 3), 0.2, 2.0)
    out = call("LogSumExp with x that needs no gradient", LogSumExp.apply, x, b, 1)
    raw = raw_backward("LogSumExp.backward", out)
    expect(raw[0] is None, "LogSumExp with an x that needs no gradient (only b does): backward must return None "
                           "for x (ctx.needs_input_grad[0] is False)")
    expect(raw[1] is not None, "LogSumExp with an x that needs no gradient: b still needs its gradient")
    out = call("LogSumExp on float32", LogSumExp.apply, torch.tensor([[1.0, 2.0]], requires_grad=True), None, 1)
    expect(out.dtype == torch.float32, f"LogSumExp of a float32 tensor should be float32, got {out.dtype}")

    def make(change):
        x = _tensor(rng, (2, 3))
        out = LogSumExp.apply(x, _tensor(rng, (2, 3), 0.2, 2.0), 1)
        if change:
            with torch.no_grad():
                change(x)
        return out
    _check_saved_properly("LogSumExp", make)


# ---- Exercise 3: LogCosh ----------------------------------------------------------------------------------------------

def _logcosh(d):
    return np.logaddexp(d, -d) - np.log(2)


def _reduce(values, reduction):
    return values.mean() if reduction == "mean" else values.sum() if reduction == "sum" else values


def check_logcosh(LogCosh):
    rng = np.random.default_rng(8)
    for shape in [(3,), (2, 3), (), (4, 1, 2)]:
        for reduction_ in ("mean", "sum", "none"):
            pred, target = _tensor(rng, shape, -3, 3), _tensor(rng, shape, -3, 3)
            case = f"LogCosh.apply(pred, target of shape {shape}, {reduction_!r})"
            out = call(case, LogCosh.apply, pred, target, reduction_)
            expect(isinstance(out, torch.Tensor), f"{case} must return a Tensor, got {type(out).__name__}")
            assert_close(out, _reduce(_logcosh(pred._array - target._array), reduction_), f"{case}: forward")
            raw = raw_backward("LogCosh.backward", out)
            expect(len(raw) == 3, f"{case}: backward returned {len(raw)} values for forward's 3 arguments")
            expect(raw[2] is None, f"{case}: reduction is a string, its gradient must be None")
            gradient_check(case, lambda p, t, r=reduction_: LogCosh.apply(p, t, r), [pred, target], seed=len(shape))
    for d in ([800.0, -800.0, 0.0], [750.5, -1e4, 3.0]):
        pred = torch.tensor(d, dtype=torch.float64, requires_grad=True)
        case = f"LogCosh of d = {d}"
        out = call(case, LogCosh.apply, pred, torch.zeros(3, dtype=torch.float64), "none")
        expect(bool(np.all(np.isfinite(out._array))), f"{case}: got {out._array}: cosh overflows, use "
                                                       "|d| + log(1 + exp(-2|d|)) - log 2")
        assert_close(out, _logcosh(np.array(d)), f"{case}: forward", rtol=1e-12)
        out.sum().backward()
        assert_close(pred.grad, np.tanh(d), f"{case}: gradient")
    for needs in ((True, False), (False, True)):
        pred = _tensor(rng, (2, 3), requires_grad=needs[0])
        target = _tensor(rng, (2, 3), requires_grad=needs[1])
        which = "only pred" if needs[0] else "only target"
        for reduction_ in ("mean", "none"):
            case = f"LogCosh with {which} requiring grad, reduction {reduction_!r}"
            out = call(case, LogCosh.apply, pred, target, reduction_)
            raw = raw_backward("LogCosh.backward", out)
            for k, name in enumerate(("pred", "target")):
                if needs[k]:
                    expect(raw[k] is not None, f"{case}: backward returned None for {name}, which needs a gradient")
                else:
                    expect(raw[k] is None, f"{case}: {name} needs no gradient (ctx.needs_input_grad[{k}] is False): "
                                           f"backward must return None for it, got {type(raw[k]).__name__}")
            wanted = pred if needs[0] else target
            sign = 1.0 if needs[0] else -1.0
            scale = 1 / 6 if reduction_ == "mean" else 1.0
            assert_close(raw[0 if needs[0] else 1], sign * scale * np.tanh(pred._array - target._array),
                         f"{case}: the gradient for {'pred' if needs[0] else 'target'}")
            del wanted
    out = call("LogCosh on float32", LogCosh.apply, torch.tensor([0.5, 1.0], requires_grad=True),
               torch.tensor([0.0, 0.0]), "mean")
    expect(out.dtype == torch.float32, f"LogCosh of float32 tensors should be float32, got {out.dtype}")

    def make(change):
        pred = _tensor(rng, (3,))
        out = LogCosh.apply(pred, _tensor(rng, (3,), requires_grad=False), "sum")
        if change:
            with torch.no_grad():
                change(pred)
        return out
    _check_saved_properly("LogCosh", make)


# ---- Exercise 4: check_grad --------------------------------------------------------------------------------------------

GRADCHECK_YOURSELF = ("write the gradient check yourself: do not call chibigrad's gradcheck or gradgradcheck "
                      "(or their helpers)")


def _jacobian_errors(fn, inputs, eps):
    """The oracle: per input, max |engine Jacobian - central-difference Jacobian| (numpy, float64)."""
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
                analytical[j] = g._array.ravel()
        numerical = np.zeros_like(analytical)
        for k in range(x.numel()):
            values = []
            for step in (eps, -eps):
                moved = np.array(x._array, copy=True)
                moved.flat[k] += step
                args = list(inputs)
                args[i] = torch.tensor(moved)
                with torch.no_grad():
                    values.append(np.asarray(fn(*args)._array, dtype=np.float64).ravel())
            numerical[:, k] = (values[0] - values[1]) / (2 * eps)
        errors.append(float(np.abs(analytical - numerical).max(initial=0.0)))
    return errors


class _Square(torch.autograd.Function):
    """x * x with a backward that forgets the factor 2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x


class _IgnoresGradOutput(torch.autograd.Function):
    """A @ x whose backward returns the gradient of the *sum* of the outputs, whatever grad_output is."""

    @staticmethod
    def forward(ctx, a, x):
        ctx.save_for_backward(a)
        return a @ x

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return None, a.sum(0)


class _WrongSecond(torch.autograd.Function):
    """x * y with the gradient for y of the wrong sign: x's is right, y's is wrong."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return grad * y, -grad * x


def _check_grad_cases(rng):
    """``(description, fn, inputs, eps, what the errors should be: "zero" or "oracle")``."""
    f = lambda shape, lo=0.5, hi=1.5, grad=True: _tensor(rng, shape, lo, hi, requires_grad=grad)  # noqa: E731
    yield "exp(3x), a large second derivative (one-sided differences are off here)", \
        lambda x: (x * 3).exp(), [f((3,))], 1e-6, "zero"
    yield "tanh(a @ b) for matrices", lambda a, b: (a @ b).tanh(), [f((2, 3), -1, 1), f((3, 2), -1, 1)], 1e-6, "zero"
    yield "sin(x * c) * k with a constant tensor c and a number k", \
        lambda x, c, k: (x * c).sin() * k, [f((2, 2)), f((2, 2), grad=False), 3.0], 1e-6, "zero"
    yield "a scalar input and a scalar output", lambda x: (x * x).exp() * x, [f(())], 1e-6, "zero"
    yield "broadcasting: a (3,) input and a (2, 1) input to a (2, 3) output", \
        lambda a, b: (a * b).exp() / (a + b), [f((3,)), f((2, 1))], 1e-6, "zero"
    yield "an input the output does not depend on", lambda x, y: x.exp(), [f((2,)), f((2,))], 1e-6, "zero"
    yield "x ** 3 with eps=1e-3 (central differences are off by exactly eps ** 2)", \
        lambda x: x ** 3, [f((3,))], 1e-3, "oracle"
    yield "a backward that forgets the factor 2 of x * x", _Square.apply, [f((2, 2), -2, 2)], 1e-6, "oracle"
    yield "a backward that ignores grad_output (right only for the sum of the outputs)", \
        _IgnoresGradOutput.apply, [f((3, 2), -1, 1, grad=False), f((2,))], 1e-6, "oracle"
    yield "x * y with a wrong gradient for y only", _WrongSecond.apply, [f((3,)), f((3,))], 1e-6, "oracle"


def check_check_grad(check_grad):
    rng = np.random.default_rng(9)
    blocked = [gradcheck_module.gradcheck, gradcheck_module.gradgradcheck, gradcheck_module._numerical_jacobians,
               gradcheck_module._analytical_jacobians]
    for case, fn, inputs, eps, kind in _check_grad_cases(rng):
        before = [np.array(x._array, copy=True) if isinstance(x, torch.Tensor) else x for x in inputs]
        expected = _jacobian_errors(fn, inputs, eps)
        with forbidden(blocked, GRADCHECK_YOURSELF):
            got = call(f"check_grad on {case}", check_grad, fn, list(inputs), eps=eps)
        what = f"check_grad on {case}"
        expect(isinstance(got, (list, tuple)) and len(got) == len(inputs),
               f"{what}: expected a list with one entry per input ({len(inputs)}), got {got!r}")
        for x, old in zip(inputs, before):
            if isinstance(x, torch.Tensor):
                expect(np.array_equal(x._array, old), f"{what}: an input's values changed; perturb copies, or "
                                                      "put every element back exactly")
                expect(x.grad is None, f"{what}: an input's .grad was set; use torch.autograd.grad, not backward")
        for k, (g, e) in enumerate(zip(got, expected)):
            if e is None:
                expect(g is None, f"{what}: input {k} is not a tensor that requires grad, expected None, got {g!r}")
                continue
            expect(isinstance(g, (float, int)) and not isinstance(g, bool),
                   f"{what}: input {k}: expected a float, got {type(g).__name__} ({g!r})")
            if kind == "zero":
                expect(g < 1e-6, f"{what}: input {k}: the backward is right, but check_grad reports an error of "
                                 f"{g:.3g}. Use central differences (f(x + eps) - f(x - eps)) / (2 eps): a one-sided "
                                 "difference is off by about eps * f'' / 2.")
            else:
                expect(abs(g - e) <= 1e-9 + 1e-4 * e,
                       f"{what}: input {k}: check_grad reports {g:.6g}, but the largest difference between the "
                       f"backward's Jacobian and central differences is {e:.6g}. Compare every output element "
                       "separately (one one-hot grad_outputs per element), not only their sum.")
