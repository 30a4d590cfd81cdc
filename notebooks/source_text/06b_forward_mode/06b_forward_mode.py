# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader="readonly" id="intro"
# # Assignment 06b: forward-mode rules
#
# Chapter 6b in five lines:
#
# - Reverse mode computes vector-Jacobian products `u^T J` (backward); forward mode computes
#   Jacobian-vector products `J v`: how the output moves when the input moves along the tangent `v`.
# - Inside `with fwAD.dual_level():`, `fwAD.make_dual(x, v)` attaches a tangent to `x`; every op computes
#   its output's tangent; `fwAD.unpack_dual(out).tangent` reads it.
# - A custom `Function` gets forward mode from a static `jvp(ctx, *tangents)`: one tangent per `forward`
#   argument (zeros for a tensor without a tangent, `None` for a non-tensor), returning the output's
#   tangent, **shaped like the output** (no summing back to an input's shape: that is backward's job).
# - What `jvp` needs from forward goes through `ctx.save_for_forward(...)`; inside `jvp`,
#   `ctx.saved_tensors` returns exactly those tensors. `forward` and `jvp` see plain tensors.
# - `jvp` computes with tensor operations on the tangents; a tangent is linear in the input's tangent.
#
# Each exercise gives a `Function` with its `forward` and `backward`. You add the forward-mode rule: the
# `ctx.save_for_forward(...)` call at the end of `forward` and the `jvp` method. Write your code where a
# cell says `raise NotImplementedError("Exercise ...")` (delete that line). The cell after each solution
# runs visible tests; grading adds hidden ones (random shapes and broadcasting, float64 central
# differences, the full Jacobian from reverse mode, extreme values). The exercises are graded separately.

# %% nbgrader="readonly" id="setup"
import linecache
import sys
import traceback

import numpy as np

import chibigrad as torch
import chibigrad.autograd.forward_ad as fwAD
from chibigrad.autograd import Function

import chibigrad.tracebacks
from IPython import get_ipython

chibigrad.tracebacks.install()  # errors read as in PyTorch: your frames and the message, not chibigrad's


def close(a, b, tol=1e-6):
    """True when tensors (or arrays, numbers) a and b have the same shape and values."""
    a, b = [np.asarray(v.detach() if isinstance(v, torch.Tensor) else v, dtype=np.float64) for v in (a, b)]
    return a.shape == b.shape and np.allclose(a, b, rtol=tol, atol=tol)


def f64(values):
    """A float64 tensor (finite differences want float64)."""
    return torch.tensor(values, dtype=torch.float64)


def attempt(what, fn, *args):
    """fn(*args); an error becomes one sentence: the case (`what`), what came back, and the line that raised it."""
    try:
        return fn(*args)
    except Exception as err:
        message = f"{what}: expected a result, got {type(err).__name__}: {err}{your_line(err)}{hint(err)}"
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


def hint(err):
    """What to do about a mistake these tests have seen, or ''."""
    jvps = [frame.f_code.co_qualname for frame, _ in traceback.walk_tb(err.__traceback__)
            if frame.f_code.co_name == "jvp"]
    if jvps and isinstance(err, ValueError) and "got 0" in str(err):
        return (f"\n--> in {jvps[-1]}, ctx.saved_tensors is empty: in jvp it holds what forward gave "
                "ctx.save_for_forward(...), not ctx.save_for_backward(...). Save what jvp needs with save_for_forward.")
    return ""


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


def forward_jvp(fn, inputs, tangents, what="a forward pass with dual inputs"):
    """The tangent of fn(*inputs) when each input moves along its tangent: one forward pass with duals."""
    def run():
        with fwAD.dual_level():
            out = fn(*[fwAD.make_dual(x, t) for x, t in zip(inputs, tangents)])
            return fwAD.unpack_dual(out).tangent
    return attempt(what, run)


def central_difference(fn, inputs, tangents, eps=1e-6):
    """(f(x + eps v) - f(x - eps v)) / (2 eps): J v up to eps**2, the numbers your jvp must give."""
    plus = fn(*[x + eps * t for x, t in zip(inputs, tangents)])
    minus = fn(*[x - eps * t for x, t in zip(inputs, tangents)])
    return (plus - minus) / (2 * eps)

# %% [markdown] nbgrader="readonly" id="softplus-text"
# ## Exercise 1: Softplus (2 points)
#
# `softplus(x) = log(1 + exp(x))`, computed stably in `forward` below. Its derivative is `sigmoid(x)`, so
# the forward-mode rule is `x_t * sigmoid(x)`. Save what `jvp` needs with `ctx.save_for_forward`, then
# write `jvp`. It must stay finite for large `|x|` (`x = 800`: `exp(800)` is `inf` in float64).

# %% nbgrader="solution" id="softplus"
class Softplus(Function):
    @staticmethod
    def forward(ctx, x):
        out = x.clamp(min=0) + (-x.abs()).exp().log1p()
        ctx.save_for_backward(x)
        ### BEGIN SOLUTION
        ctx.save_for_forward(x)
        ### END SOLUTION
        return out

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.sigmoid()

    @staticmethod
    def jvp(ctx, x_t):
        ### BEGIN SOLUTION
        (x,) = ctx.saved_tensors
        return x_t * x.sigmoid()
        ### END SOLUTION

# %% nbgrader="tests" id="softplus-tests" points=2
# Exercise 06b.softplus: the visible tests (no output: they pass; grading adds hidden tests)
x, v = f64([-2.0, 0.0, 0.5, 3.0]), f64([1.0, -2.0, 0.5, 3.0])
tangent = forward_jvp(Softplus.apply, [x], [v], "Softplus.apply(x), x = [-2, 0, 0.5, 3]")
assert tangent is not None, "the output has no tangent: jvp must return the output's tangent"
assert close(tangent, v * x.sigmoid()), f"J v = v * sigmoid(x) = {v * x.sigmoid()}, got {tangent}"
assert close(tangent, central_difference(Softplus.apply, [x], [v])), "jvp disagrees with central differences"
big = forward_jvp(Softplus.apply, [f64([800.0, -800.0])], [f64([2.0, 2.0])], "Softplus.apply(x), x = +-800")
assert close(big, [2.0, 0.0]), f"x = +-800 with tangent 2: expected [2, 0], got {big} (use sigmoid, not exp/(1+exp))"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a06b_forward_mode.py, softplus
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="atan2-text"
# ## Exercise 2: atan2, two inputs that broadcast (3 points)
#
# `Atan2.apply(y, x)` is the angle of the point `(x, y)`, element-wise, with `y` and `x` broadcasting
# against each other (`y` of shape `(3, 1)` and `x` of shape `(4,)` give a `(3, 4)` output). With
# `r2 = x**2 + y**2`, d/dy = `x / r2` and d/dx = `-y / r2`. Both inputs may carry a tangent (`jvp` gets
# zeros for one that has none). The output's tangent has the **output's** shape: `backward` (given) sums each
# gradient back to its input's shape, forward mode never sums anything.

# %% nbgrader="solution" id="atan2"
class Atan2(Function):
    @staticmethod
    def forward(ctx, y, x):
        out = torch.tensor(np.arctan2(y.detach().numpy(), x.detach().numpy()))
        ctx.save_for_backward(y, x)
        ### BEGIN SOLUTION
        ctx.save_for_forward(y, x)
        ### END SOLUTION
        return out

    @staticmethod
    def backward(ctx, grad):
        y, x = ctx.saved_tensors
        r2 = x * x + y * y
        return (grad * x / r2).sum_to_size(y.shape), (-grad * y / r2).sum_to_size(x.shape)

    @staticmethod
    def jvp(ctx, y_t, x_t):
        ### BEGIN SOLUTION
        y, x = ctx.saved_tensors
        return (x * y_t - y * x_t) / (x * x + y * y)
        ### END SOLUTION

# %% nbgrader="tests" id="atan2-tests" points=3
# Exercise 06b.atan2: the visible tests (no output: they pass; grading adds hidden tests)
y, x = f64([1.0, -2.0, 0.5]), f64([2.0, 1.0, -1.0])
yt, xt = f64([1.0, 0.0, 2.0]), f64([0.5, 1.0, -1.0])
tangent = forward_jvp(Atan2.apply, [y, x], [yt, xt], "Atan2.apply(y, x), y and x of shape (3,)")
assert tangent is not None, "the output has no tangent: jvp must return the output's tangent"
expected = (x * yt - y * xt) / (x * x + y * y)
assert close(tangent, expected), f"J v = (x y_t - y x_t) / (x^2 + y^2) = {expected}, got {tangent}"
y, x = f64([[1.0], [-0.5], [2.0]]), f64([0.5, -1.0, 1.5, 3.0])
yt, xt = f64([[1.0], [2.0], [-1.0]]), f64([0.0, 1.0, -2.0, 0.5])
tangent = forward_jvp(Atan2.apply, [y, x], [yt, xt], "Atan2.apply(y, x), y (3, 1) and x (4,)")
assert tangent is not None and tuple(tangent.shape) == (3, 4), \
    f"y of shape (3, 1), x of shape (4,): the tangent has the output's shape (3, 4), got {tangent}"
expected = central_difference(Atan2.apply, [y, x], [yt, xt])
assert close(tangent, expected), \
    f"broadcasting y (3, 1) against x (4,): expected {expected} (central differences), got {tangent}"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a06b_forward_mode.py, atan2
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="normalize-text"
# ## Exercise 3: normalizing to unit length (3 points)
#
# `Normalize.apply(x, dim)` divides `x` by its Euclidean norm along `dim` (kept as a size-1 dim so it
# broadcasts): `y = x / n`, `n = ||x||` along `dim`. Moving `x` along `x_t` changes both the numerator and
# the norm (`n_t = sum(y * x_t)` along `dim`), which gives
#
#     y_t = (x_t - y * sum(y * x_t, dim, keepdim=True)) / n
#
# (the part of `x_t` along `y` does not change the direction). `dim` is an int (maybe negative): its
# tangent is `None`.

# %% nbgrader="solution" id="normalize"
class Normalize(Function):
    @staticmethod
    def forward(ctx, x, dim):
        norm = (x * x).sum(dim, keepdim=True).sqrt()
        out = x / norm
        ctx.dim = dim
        ctx.save_for_backward(out, norm)
        ### BEGIN SOLUTION
        ctx.save_for_forward(out, norm)
        ### END SOLUTION
        return out

    @staticmethod
    def backward(ctx, grad):
        out, norm = ctx.saved_tensors
        return (grad - out * (grad * out).sum(ctx.dim, keepdim=True)) / norm, None

    @staticmethod
    def jvp(ctx, x_t, dim_t):
        ### BEGIN SOLUTION
        out, norm = ctx.saved_tensors
        return (x_t - out * (out * x_t).sum(ctx.dim, keepdim=True)) / norm
        ### END SOLUTION

# %% nbgrader="tests" id="normalize-tests" points=3
# Exercise 06b.normalize: the visible tests (no output: they pass; grading adds hidden tests)
x, v = f64([[3.0, 0.0, 1.0], [4.0, 2.0, -1.0]]), f64([[1.0, 2.0, 0.0], [-1.0, 0.5, 1.0]])
for dim in (0, 1, -1):
    fn = lambda t, d=dim: Normalize.apply(t, d)  # noqa: E731
    tangent = forward_jvp(fn, [x], [v], f"Normalize.apply(x, {dim}), x of shape (2, 3) with a tangent")
    assert tangent is not None, "the output has no tangent: jvp must return the output's tangent"
    expected = central_difference(fn, [x], [v])
    assert close(tangent, expected), f"dim={dim}: expected {expected} (central differences), got {tangent}"
along = forward_jvp(lambda t: Normalize.apply(t, 1), [f64([[3.0, 4.0]])], [f64([[3.0, 4.0]])],
                    "Normalize.apply(x, 1), x moving along itself")
assert close(along, [[0.0, 0.0]]), f"moving x along itself does not change x / |x|: expected 0, got {along}"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a06b_forward_mode.py, normalize
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="inverse-text"
# ## Exercise 4: the matrix inverse (3 points)
#
# `Inverse.apply(A)` inverts square matrices, or a batch of them (shape `(..., n, n)`). From
# `A @ Y = I`: `A_t @ Y + A @ Y_t = 0`, so
#
#     Y_t = -Y @ A_t @ Y
#
# Matrix products do not commute: the order matters. (`backward`, given, is the transpose of this map:
# `-Y^T @ G @ Y^T`; `x.mT` transposes the last two dims.)

# %% nbgrader="solution" id="inverse"
class Inverse(Function):
    @staticmethod
    def forward(ctx, A):
        out = torch.tensor(np.linalg.inv(A.detach().numpy()))
        ctx.save_for_backward(out)
        ### BEGIN SOLUTION
        ctx.save_for_forward(out)
        ### END SOLUTION
        return out

    @staticmethod
    def backward(ctx, grad):
        (Y,) = ctx.saved_tensors
        return -(Y.mT @ grad @ Y.mT)

    @staticmethod
    def jvp(ctx, A_t):
        ### BEGIN SOLUTION
        (Y,) = ctx.saved_tensors
        return -(Y @ A_t @ Y)
        ### END SOLUTION

# %% nbgrader="tests" id="inverse-tests" points=3
# Exercise 06b.inverse: the visible tests (no output: they pass; grading adds hidden tests)
A, V = f64([[2.0, 1.0], [0.5, 3.0]]), f64([[0.0, 1.0], [2.0, -1.0]])
tangent = forward_jvp(Inverse.apply, [A], [V], "Inverse.apply(A), A of shape (2, 2)")
assert tangent is not None, "the output has no tangent: jvp must return the output's tangent"
Y = np.linalg.inv(A.numpy())
assert close(tangent, -Y @ V.numpy() @ Y), f"Y_t = -Y @ A_t @ Y = {-Y @ V.numpy() @ Y}, got {tangent}"
A = f64([[[1.0, 2.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 3.0]], [[2.0, 0.0, 1.0], [1.0, 1.0, 0.0], [0.0, 1.0, 4.0]]])
V = f64([[[1.0, 0.0, 2.0], [0.5, 1.0, 0.0], [0.0, -1.0, 1.0]], [[0.0, 1.0, 0.0], [2.0, 0.0, 1.0], [1.0, 1.0, 0.0]]])
tangent = forward_jvp(Inverse.apply, [A], [V], "Inverse.apply(A), A of shape (2, 3, 3)")
assert close(tangent, central_difference(Inverse.apply, [A], [V])), \
    "a batch of two 3 x 3 matrices: jvp disagrees with central differences"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a06b_forward_mode.py, inverse
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="outro"
# ## Before you submit
#
# *Kernel > Restart Kernel and Run All Cells*, then **Validate**. "Success" means your notebook passes the
# visible tests, which catch the mistakes students make most often. Grading runs the same cells with **hidden
# tests** added to each tests cell: random shapes, broadcasting, float32, inputs without a tangent, your rule
# against central differences and against the full Jacobian from reverse mode, and inside `torch.func.jvp` and
# `jacfwd`. Code that is right, not just right on the visible examples, passes them.
