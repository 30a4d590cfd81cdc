# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader="readonly" id="intro"
# # Assignment 06: custom autograd Functions
#
# Chapter 6 in six lines:
#
# - A `Function` is a pair of static methods. `apply` runs `forward(ctx, *args)` with recording off, then
#   makes `ctx` the output's `grad_fn`; `backward(ctx, grad_output)` returns **one value per argument of
#   forward**: a gradient shaped like that input, or `None` (for a non-tensor argument, or an input whose
#   `ctx.needs_input_grad` entry is `False`).
# - Tensors go through `ctx.save_for_backward(...)` / `ctx.saved_tensors`: backward frees them and an
#   in-place change after forward is detected. Numbers, strings and shapes go on `ctx` as attributes.
# - Numerically safe formulas matter: `exp(1000)` is `inf` in any float type.
# - A backward written with tensor operations on saved **inputs and outputs** can be differentiated
#   again (`create_graph=True`); an intermediate saved in forward is a constant to it, so second
#   derivatives through it come out wrong, silently.
# - `gradcheck` compares backward with **central** differences, in float64.
#
# Write your code where a cell says `raise NotImplementedError("Exercise ...")` (delete that line). The
# cell after each solution runs visible tests; grading adds hidden ones (other shapes and dims, float64
# gradient checks of first and second derivatives, freed graphs, in-place changes, extreme values).
# The exercises are graded separately: don't use one exercise's answer in another.

# %% nbgrader="readonly" id="setup"
import linecache
import sys
import traceback

import numpy as np

import chibigrad as torch
from chibigrad.autograd import Function, gradcheck, gradgradcheck

import chibigrad.tracebacks
from IPython import get_ipython

chibigrad.tracebacks.install()  # errors read as in PyTorch: your frames and the message, not chibigrad's


def close(a, b, tol=1e-6):
    """True when tensors (or arrays, numbers) a and b have the same shape and values."""
    a, b = [np.asarray(v.detach() if isinstance(v, torch.Tensor) else v, dtype=np.float64) for v in (a, b)]
    return a.shape == b.shape and np.allclose(a, b, rtol=tol, atol=tol)


def f64(values, requires_grad=True):
    """A float64 tensor (gradient checks want float64)."""
    return torch.tensor(values, dtype=torch.float64, requires_grad=requires_grad)


def attempt(what, fn, *args):
    """fn(*args); an error becomes one sentence: the case (`what`), what came back, and the line that raised it."""
    try:
        return fn(*args)
    except Exception as err:
        message = f"{what}: expected a result, got {type(err).__name__}: {err}{your_line(err)}"
    raise AssertionError(message) from None  # one message, not a chain of two tracebacks


def your_line(err):
    """Where the error came from: the last line of a notebook cell (not this one) that it went through."""
    cells = [(frame, line) for frame, line in traceback.walk_tb(err.__traceback__)
             if frame.f_globals.get("__name__") == "__main__" and frame.f_code.co_filename != SETUP_CELL]
    if not cells:
        return ""
    frame, line = cells[-1]
    text = linecache.getline(frame.f_code.co_filename, line).strip()
    return f"\n    raised in {frame.f_code.co_qualname}" + (f": {text}" if text else "")


def without_helpers(shell, etype, value, tb, tb_offset=None):
    """Show an error without the frames of this cell's helpers: a failed test reads as its line and its message."""
    last = tb
    while last.tb_next is not None and last.tb_frame.f_globals.get("__name__") != "__main__":  # to the cell's frame
        last = last.tb_next
    while last.tb_next is not None and last.tb_next.tb_frame.f_code.co_filename != SETUP_CELL:
        last = last.tb_next
    last.tb_next = None
    show_as_pytorch(etype, value, tb, tb_offset)


SETUP_CELL = sys._getframe().f_code.co_filename  # this cell: the helpers that tracebacks leave out
shell = get_ipython()
if shell is not None:  # in Jupyter (not when the cells run as plain Python)
    show_as_pytorch = shell.CustomTB  # chibigrad.tracebacks.install()'s handler, after the cut
    shell.set_custom_exc((Exception,), without_helpers)
    shell.InteractiveTB.set_mode("Plain")  # each frame's line, not the lines around it: the message comes first


# %% [markdown] nbgrader="readonly" id="swish-text"
# ## Exercise 1: Swish, with a learnable slope and a right second derivative (3 points)
#
# `swish(x, beta) = x * sigmoid(beta * x)`. SiLU is `beta = 1` (chibigrad ships it as `F.silu`); here
# `beta` is a parameter too: a Python float, or a tensor that broadcasts against `x` (a learnable
# scalar, or one slope per channel). With `s = sigmoid(beta * x)` and `sigmoid' = s * (1 - s)`:
#
# - d swish / dx = `s + beta * x * s * (1 - s)`
# - d swish / d beta = `x * x * s * (1 - s)`
#
# Write `Swish`, used as `Swish.apply(x, beta)`:
#
# - keep tensors with `ctx.save_for_backward` and a float `beta` as an attribute;
# - return a gradient for a tensor `beta` summed to `beta`'s shape (`Tensor.sum_to_size`), `None` for a
#   float;
# - **second derivatives must be right**: the chapter's `MySiLU` saves `sigmoid_x` in forward and its
#   second derivative is silently wrong. Save inputs only and compute `s` in backward, with tensor
#   operations, so that `create_graph=True` differentiates through it.

# %% nbgrader="solution" id="swish"
class Swish(Function):
    @staticmethod
    def forward(ctx, x, beta):
        ### BEGIN SOLUTION
        is_tensor = isinstance(beta, torch.Tensor)
        ctx.save_for_backward(x, beta if is_tensor else None)
        ctx.number = None if is_tensor else beta
        return x * torch.sigmoid(beta * x)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad):
        ### BEGIN SOLUTION
        x, beta_tensor = ctx.saved_tensors
        beta = ctx.number if beta_tensor is None else beta_tensor
        s = torch.sigmoid(beta * x)
        slope = s * (1 - s)
        grad_x = grad * (s + beta * x * slope)
        if beta_tensor is None:
            return grad_x, None
        return grad_x, (grad * x * x * slope).sum_to_size(beta_tensor.shape)
        ### END SOLUTION

# %% nbgrader="tests" id="swish-tests" points=3
# Exercise 06.swish: the visible tests (no output: they pass; grading adds hidden tests)
x = f64([-2.0, 0.5, 3.0])
beta = f64(1.5)
y = attempt("Swish.apply(x, beta)", Swish.apply, x, beta)
s = 1 / (1 + np.exp(-1.5 * np.array([-2.0, 0.5, 3.0])))
assert close(y, [-2.0, 0.5, 3.0] * s), f"forward: got {y}"
assert y.grad_fn.name() == "SwishBackward", f"grad_fn should be SwishBackward, got {y.grad_fn}"
raw = attempt("your backward, called with grad_output = ones", y.grad_fn.apply, torch.ones(3, dtype=torch.float64))
assert tuple(raw[1].shape) == (), \
    f"beta has shape (): its gradient must be summed to that shape (sum_to_size), got shape {tuple(raw[1].shape)}"
gx, gb = attempt("autograd.grad(y.sum(), [x, beta], create_graph=True)",
                 lambda: torch.autograd.grad(y.sum(), [x, beta], create_graph=True))
xs = np.array([-2.0, 0.5, 3.0])
assert close(gx, s + 1.5 * xs * s * (1 - s)), f"d swish / dx: got {gx}"
assert close(gb, (xs * xs * s * (1 - s)).sum()), f"d swish / d beta (summed to beta's shape ()): got {gb}"
(gxx,) = attempt("the second derivative, autograd.grad(gx.sum(), x) (backward must be differentiable: no "
                 "once_differentiable, no numpy)", lambda: torch.autograd.grad(gx.sum(), x))
expected = s * (1 - s) * (2 * 1.5 + 1.5 ** 2 * xs * (1 - 2 * s))
assert close(gxx, expected), f"second derivative d2 swish / dx2: got {gxx}, expected {expected}"
assert gradcheck(Swish.apply, (x, beta)) and gradgradcheck(Swish.apply, (x, beta)), "gradcheck or gradgradcheck"
x = torch.tensor([1.0, -1.0], requires_grad=True)
y = Swish.apply(x, 2.0)
assert y.grad_fn.apply(torch.ones(2))[1] is None, "a float beta gets None as its gradient"
y.sum().backward()
try:
    y.sum().backward()  # the first backward freed the graph
except RuntimeError:
    pass
else:
    raise AssertionError("a second backward through Swish worked, expected the engine's RuntimeError: keep tensors "
                         "with ctx.save_for_backward (the engine frees them), not as ctx attributes")
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a06_custom_functions.py, swish
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="logsumexp-text"
# ## Exercise 2: a weighted, stable LogSumExp (3 points)
#
# `LogSumExp.apply(x, b, dim)` computes `log(sum(b * exp(x), dim))`, reducing dimension `dim` (an int,
# maybe negative), as `scipy.special.logsumexp(x, axis=dim, b=b)` does. `b` is `None` (all weights 1)
# or a tensor of weights `>= 0` with `x`'s shape. chibigrad's `torch.logsumexp` has no weights; write
# your own and don't call it (nor `log_softmax`).
#
# - **Stable**: `x = [1000, 1000]` gives `1000 + log 2`, not `inf`; `x = [-1000, -1000]` gives
#   `-1000 + log 2`, not `-inf`. Subtract the maximum before `exp`, add it back after `log`.
# - An entry with weight 0 does not count, even when its `x` is the largest: `x = [1000, 0]` with
#   `b = [0, 1]` gives `0`. (Hint: `b * exp(x) = exp(x + log b)`, and `log 0 = -inf`.)
# - Backward: with `out` the result (unsqueezed back at `dim`), the gradient for `x` is
#   `grad * exp(x + log b - out)`, a weighted softmax (that is `grad * b * exp(x - out)`, but without
#   `0 * inf` where a weight is 0 and `x` is huge); for `b` it is `grad * exp(x - out)`. Return `None` for
#   `dim`, and `None` for `x` or `b` when it is `None` or does not need a gradient (`ctx.needs_input_grad`).
# - Use tensor operations (`amax(dim, keepdim=True)`, `exp`, `log`, `sum`, `squeeze`, `unsqueeze`).

# %% nbgrader="solution" id="logsumexp"
class LogSumExp(Function):
    @staticmethod
    def forward(ctx, x, b, dim):
        ### BEGIN SOLUTION
        shifted = x if b is None else x + b.log()
        top = shifted.amax(dim, keepdim=True)
        out = ((shifted - top).exp().sum(dim, keepdim=True).log() + top).squeeze(dim)
        ctx.dim = dim
        ctx.save_for_backward(x, b, out)
        return out
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad):
        ### BEGIN SOLUTION
        x, b, out = ctx.saved_tensors
        grad, out = grad.unsqueeze(ctx.dim), out.unsqueeze(ctx.dim)
        grad_x = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_x = grad * ((x if b is None else x + b.log()) - out).exp()
        if b is not None and ctx.needs_input_grad[1]:
            grad_b = grad * (x - out).exp()
        return grad_x, grad_b, None
        ### END SOLUTION

# %% nbgrader="tests" id="logsumexp-tests" points=3
# Exercise 06.logsumexp: the visible tests (no output: they pass; grading adds hidden tests)
x = f64([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]])
out = attempt("LogSumExp.apply(x, None, 1)", LogSumExp.apply, x, None, 1)
assert close(out, np.log(np.exp([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]]).sum(1))), f"forward, dim=1: got {out}"
attempt("backward of LogSumExp over dim 1 of a (2, 3) input", out.sum().backward)
assert close(x.grad, np.exp([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]]) / np.exp([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]]).sum(
    1, keepdims=True)), f"gradient without weights is the softmax: got {x.grad}"
big = LogSumExp.apply(f64([[1000.0, 1000.0], [-1000.0, -1000.0]]), None, -1)
assert close(big, [1000 + np.log(2), -1000 + np.log(2)]), f"stability: got {big} (subtract the maximum)"
x, b = f64([1.0, 2.0]), f64([0.25, 3.0])
out = LogSumExp.apply(x, b, 0)
assert close(out, np.log(0.25 * np.e + 3 * np.e ** 2)), f"weights: got {out}"
gx, gb = attempt("autograd.grad(out, [x, b]) with weights b", torch.autograd.grad, out, [x, b])
assert close(gx, np.array([0.25 * np.e, 3 * np.e ** 2]) / (0.25 * np.e + 3 * np.e ** 2)), f"gradient for x: {gx}"
assert close(gb, np.array([np.e, np.e ** 2]) / (0.25 * np.e + 3 * np.e ** 2)), f"gradient for b: {gb}"
zero = LogSumExp.apply(f64([1000.0, 0.0], False), f64([0.0, 1.0], False), 0)
assert close(zero, 0.0), f"a weight 0 on the largest x: got {zero}, expected 0"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a06_custom_functions.py, logsumexp
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="logcosh-text"
# ## Exercise 3: a LogCosh loss with a reduction and `needs_input_grad` (2 points)
#
# `LogCosh.apply(pred, target, reduction)`: with `d = pred - target` (same shapes), the loss is
# `log(cosh(d))` element-wise, then `reduction`: `"mean"` (average over all elements), `"sum"`, or
# `"none"` (the element-wise losses). Its derivative is `tanh(d)` for `pred` and `-tanh(d)` for `target`.
#
# - **Stable**: `cosh(800)` is `inf` in float64, yet `log(cosh(800)) = 800 - log 2`. Use
#   `log(cosh(d)) = |d| + log(1 + exp(-2 |d|)) - log 2`.
# - `reduction` is a string: keep it on `ctx`, return `None` for it.
# - Usually only `pred` needs a gradient. For each of `pred` and `target` whose `ctx.needs_input_grad`
#   entry is `False`, return `None` and don't compute that gradient.

# %% nbgrader="solution" id="logcosh"
class LogCosh(Function):
    @staticmethod
    def forward(ctx, pred, target, reduction):
        ### BEGIN SOLUTION
        ctx.reduction = reduction
        ctx.save_for_backward(pred, target)
        d = (pred - target).abs()
        losses = d + ((d * -2).exp() + 1).log() - np.log(2)
        if reduction == "mean":
            return losses.mean()
        return losses.sum() if reduction == "sum" else losses
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad):
        ### BEGIN SOLUTION
        pred, target = ctx.saved_tensors
        slope = (pred - target).tanh()
        if ctx.reduction == "mean":
            grad = grad / pred.numel()
        grad_pred = grad * slope
        return (grad_pred if ctx.needs_input_grad[0] else None,
                -grad_pred if ctx.needs_input_grad[1] else None, None)
        ### END SOLUTION

# %% nbgrader="tests" id="logcosh-tests" points=2
# Exercise 06.logcosh: the visible tests (no output: they pass; grading adds hidden tests)
pred, target = f64([0.5, -1.0, 2.0]), f64([0.0, 1.0, 2.0], requires_grad=False)
d = np.array([0.5, -2.0, 0.0])
loss = LogCosh.apply(pred, target, "mean")
assert close(loss, np.log(np.cosh(d)).mean()), f"mean loss: got {loss}"
assert close(LogCosh.apply(pred, target, "none"), np.log(np.cosh(d))), "reduction='none': element-wise losses"
assert close(LogCosh.apply(pred, target, "sum"), np.log(np.cosh(d)).sum()), "reduction='sum'"
loss.backward()
assert close(pred.grad, np.tanh(d) / 3), f"gradient of the mean loss: got {pred.grad}"
huge = LogCosh.apply(f64([800.0, -800.0]), f64([0.0, 0.0]), "none")
assert close(huge, [800 - np.log(2)] * 2), f"stability: got {huge}"
grads = LogCosh.apply(pred, target, "sum").grad_fn.apply(torch.tensor(1.0, dtype=torch.float64))
assert len(grads) == 3 and grads[1] is None and grads[2] is None, \
    f"target needs no gradient and reduction is a string: backward should return (grad, None, None), got {grads}"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a06_custom_functions.py, logcosh
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="check_grad-text"
# ## Exercise 4: your own gradient checker (3 points)
#
# Write `check_grad(fn, inputs, eps=1e-6)`. `fn(*inputs)` returns one tensor (any shape); `inputs` is a
# list of arguments, some of them tensors that require grad (float64). Return a list with one entry per
# input: `None` if it is not a tensor that requires grad, otherwise the largest absolute difference
# (a float) between
#
# - the **analytical** Jacobian, from backward: for each output element `j`, one
#   `torch.autograd.grad(out, wanted, one_hot_j, retain_graph=True, allow_unused=True)` gives row `j`
#   of d out / d input (`None` from `allow_unused` means zeros); and
# - the **numerical** Jacobian, by **central** differences: for each element `k` of each input,
#   `(fn(.., x + eps e_k, ..) - fn(.., x - eps e_k, ..)) / (2 * eps)`, run under `torch.no_grad()`.
#
# A one-sided difference `(f(x + eps) - f(x)) / eps` is off by about `eps * f'' / 2`; the central one by
# `eps**2 * f''' / 6`. That difference decides whether a correct backward passes.
#
# Leave the inputs as they were: perturb copies (`x.detach().clone()`, then `copy.view(-1)[k] += eps`),
# and don't touch `.grad` (use `autograd.grad`, not `backward`). Don't call chibigrad's `gradcheck`.
# **The grader reads your code:** if `check_grad` or anything it uses names `gradcheck` or `gradgradcheck`,
# or copies a function (`__code__`, `FunctionType`), this exercise scores 0.
# Code the grader cannot read (`exec`, `eval`, `getattr` with a computed name, `globals()`, `get_ipython()`, a
# magic such as `%run`, a module of your own) outside the other exercises' answers scores it 0 too.

# %% nbgrader="solution" id="check_grad"
def check_grad(fn, inputs, eps=1e-6):
    """Per input: max |analytical - numerical| Jacobian entry, or None if it needs no gradient."""
    ### BEGIN SOLUTION
    inputs = list(inputs)
    wanted = [i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and x.requires_grad]
    out = fn(*inputs)
    analytical = {i: np.zeros((out.numel(), inputs[i].numel())) for i in wanted}
    for j in range(out.numel()):
        one_hot = torch.zeros_like(out)
        one_hot.view(-1)[j] = 1.0
        rows = torch.autograd.grad(out, [inputs[i] for i in wanted], one_hot, retain_graph=True, allow_unused=True)
        for i, row in zip(wanted, rows):
            if row is not None:
                analytical[i][j] = row.detach().numpy().ravel()
    errors = [None] * len(inputs)
    for i in wanted:
        numerical = np.zeros_like(analytical[i])
        for k in range(inputs[i].numel()):
            values = []
            for step in (eps, -eps):
                moved = inputs[i].detach().clone()
                moved.view(-1)[k] += step
                args = inputs[:i] + [moved] + inputs[i + 1:]
                with torch.no_grad():
                    values.append(fn(*args).numpy().ravel())
            numerical[:, k] = (values[0] - values[1]) / (2 * eps)
        errors[i] = float(np.abs(analytical[i] - numerical).max(initial=0.0))
    return errors
    ### END SOLUTION

# %% nbgrader="tests" id="check_grad-tests" points=3
# Exercise 06.check_grad: the visible tests (no output: they pass; grading adds hidden tests)
x, w = f64([0.3, -0.8]), f64([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
errors = attempt("check_grad on (w @ x).tanh() * 2.0", check_grad, lambda x, w, scale: (w @ x).tanh() * scale,
                 [x, w, 2.0])
assert isinstance(errors, list) and len(errors) == 3, f"one entry per input: got {errors}"
assert errors[2] is None, f"the number 2.0 needs no gradient: expected None, got {errors[2]}"
assert errors[0] < 1e-8 and errors[1] < 1e-8, f"a correct backward: errors should be ~0, got {errors}"
assert x.grad is None and w.grad is None, "don't touch .grad: use torch.autograd.grad"
assert close(x, [0.3, -0.8]), "leave the inputs as they were"


class HalfGradient(Function):  # a wrong backward: half the true gradient of x ** 2
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x


errors = check_grad(HalfGradient.apply, [f64([1.0, -3.0])])
assert abs(errors[0] - 3.0) < 1e-6, f"backward gives x, the truth is 2x: the largest error is 3, got {errors}"
errors = check_grad(lambda x: (x * 3).exp(), [f64([1.0, 1.5])])
assert errors[0] < 1e-6, f"exp(3x) has a large second derivative; central differences still agree: got {errors}"


class IgnoresGradOutput(Function):  # a wrong backward: right only when grad_output is all ones
    @staticmethod
    def forward(ctx, x):
        return x * torch.tensor([1.0, 2.0], dtype=torch.float64)

    @staticmethod
    def backward(ctx, grad):
        return torch.tensor([1.0, 2.0], dtype=torch.float64)


errors = check_grad(IgnoresGradOutput.apply, [f64([0.5, 0.5])])
assert abs(errors[0] - 2.0) < 1e-6, \
    (f"a backward that ignores grad_output: its Jacobian rows are all [1, 2], the truth is diag(1, 2), so the largest "
     f"error is 2; got {errors} (check each output on its own, one backward per output element)")
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a06_custom_functions.py, check_grad
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="outro"
# ## Before you submit
#
# *Kernel > Restart Kernel and Run All Cells*, then **Validate**. "Success" means your notebook passes the
# visible tests, which catch the mistakes students make most often. Grading runs the same cells with **hidden
# tests** added to each tests cell: other shapes and dims, float64 checks of first and second derivatives, freed
# graphs, in-place changes, extreme values and wrong backwards your check_grad must expose. Code that is right,
# not just right on the visible examples, passes them.
