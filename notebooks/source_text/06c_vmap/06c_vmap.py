# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader="readonly" id="intro"
# # Assignment 06c: batching rules and per-sample gradients
#
# Chapter 6c in five lines:
#
# - `vmap(f)(xs)` runs `f` once on the whole batch, as if it ran once per sample and stacked the results. Inside,
#   `f` sees one sample (a `BatchedTensor`); every op it calls meets the batch through the op's **batching rule**.
# - PyTorch writes a rule as a function of each tensor and its **batch dim** (`bdim`): where in that tensor the
#   samples are stacked, or `None` for a tensor that is the same for every sample. The op's other arguments
#   (`dim`, ...) are in the **sample's** numbering. The rule returns the result and the result's batch dim.
# - Most rules are a few lines: move the batch dim to the front (`x.movedim(bdim, 0)`), call the op once on the
#   batch with its dims shifted by one, and say where the batch dim went. An unbatched operand is the same for
#   every sample: it must broadcast against the batch, never be taken for one.
# - An op without a rule runs once per sample (slow: a Python loop). A rule calls ops a number of times that does
#   not depend on the batch size.
# - `vmap(grad(loss), in_dims=(None, 0, 0))(params, xs, ys)`: one gradient per sample in one backward pass.
#
# You write three batching rules the way PyTorch's are written and a per-sample-gradient function. Write your
# code where a cell says `raise NotImplementedError("Exercise ...")` (delete that line). The cell after each
# solution runs visible tests; grading adds hidden ones (random shapes and batch dims, negative and tuple dims,
# your rule inside `vmap`, the number of ops it runs). The exercises are graded separately: a solution must not
# call another exercise's.

# %% nbgrader="readonly" id="setup"
import contextlib
import linecache
import sys
import traceback

import numpy as np

import chibigrad as torch
import chibigrad.nn.functional as F
from chibigrad import batching_rules
from chibigrad.autograd import engine, function
from chibigrad.func import grad, vmap
from chibigrad.ops import linalg, reduction, selection

import chibigrad.tracebacks
from IPython import get_ipython

chibigrad.tracebacks.install()  # errors read as in PyTorch: your frames and the message, not chibigrad's


def close(a, b, tol=1e-6):
    """True when tensors (or arrays, numbers) a and b have the same shape and values."""
    a, b = [np.asarray(v.detach() if isinstance(v, torch.Tensor) else v, dtype=np.float64) for v in (a, b)]
    return a.shape == b.shape and np.allclose(a, b, rtol=tol, atol=tol)


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


def batched(samples, bdim):
    """The samples (a list of tensors of one shape) stacked along dim ``bdim``: a batch as vmap hands it to a rule."""
    return torch.stack(samples, bdim)


def rule_result(what, rule, *args):
    """``rule(*args)`` -> (out, out_bdim), checked to be a tensor and a dim of it; the batch moved to the front."""
    result = attempt(what, rule, *args)
    assert isinstance(result, tuple) and len(result) == 2, \
        f"{what}: expected (result, result's batch dim) from a rule, got {type(result).__name__}: {result}"
    out, out_bdim = result
    assert isinstance(out, torch.Tensor), f"{what}: expected a tensor as the result, got {type(out).__name__}"
    assert isinstance(out_bdim, int) and -out.ndim <= out_bdim < out.ndim, \
        f"{what}: expected the result's batch dim, a dim of the result (shape {tuple(out.shape)}), got {out_bdim!r}"
    return out.movedim(out_bdim, 0)


def loop(f, *samples):
    """What vmap must equal: f on each sample (lists of per-sample arguments), the results stacked."""
    return torch.stack([f(*args) for args in zip(*samples)])


def ops_run(fn, *args):
    """How many ops ``fn(*args)`` ran (calls of Function.apply): a rule's count does not grow with the batch."""
    real, count = function._apply, [0]

    def counted(*a, **k):
        count[0] += 1
        return real(*a, **k)
    function._apply = counted
    try:
        fn(*args)
    finally:
        function._apply = real
    return count[0]


def backward_passes(fn, *args):
    """How many backward passes ``fn(*args)`` ran (calls of the engine): per-sample gradients need one."""
    real, count = engine.execute, [0]

    def counted(*a, **k):
        count[0] += 1
        return real(*a, **k)
    engine.execute = counted
    try:
        result = fn(*args)
    finally:
        engine.execute = real
    return count[0], result


def _sum_call(rule, args, bdims):
    a, dim, keepdim, _ = args
    return rule(a, bdims[0], dim, keepdim)


def _mm_call(rule, args, bdims):
    return rule(args[0], bdims[0], args[1], bdims[1])


def _index_select_call(rule, args, bdims):
    a, dim, index = args
    return rule(a, bdims[0], dim, torch.tensor(index), bdims[2])


ENGINE_OPS = {"sum": ((reduction.SumAll, reduction.SumDim), _sum_call), "mm": ((linalg.Mm,), _mm_call),
              "index_select": ((selection.IndexSelect,), _index_select_call)}


@contextlib.contextmanager
def your_rule(name, rule):
    """Inside the block, vmap batches the op ``name`` ("sum", "mm" or "index_select") with your ``rule``.

    chibigrad's engine hands a rule every batched argument with its batch first; this calls your rule
    PyTorch's way (each tensor with its bdim: 0, or None) and moves the batch dim you return to the front."""
    ops, call = ENGINE_OPS[name]

    def engine_rule(op, args, is_batched, size):
        out, out_bdim = call(rule, args, [0 if b else None for b in is_batched])
        return out.movedim(out_bdim, 0)
    saved = {op: batching_rules.rules.get(op) for op in ops}
    batching_rules.rules.update({op: engine_rule for op in ops})
    try:
        yield
    finally:
        for op, old in saved.items():
            batching_rules.rules[op] = old


W_TRUE = torch.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, -1.0], [2.0, 0.5, 1.0], [-1.0, 0.0, 1.5]])


def loss(params, x, y):
    """The mean cross-entropy of a linear classifier on a batch: x (N, 4), y (N,) class numbers, params (W, b).

    x @ W written as a product and a sum over dim -2 (a mean times its length), so that no op of it is one whose
    batching rule you write: vmap of it runs each op once on the whole batch however far you are."""
    W, b = params
    return F.cross_entropy((x.unsqueeze(-1) * W).mean(-2) * W.shape[0] + b, y)

# %% [markdown] nbgrader="readonly" id="sum_rule-text"
# ## Exercise 1: a reduction over dims (3 points)
#
# Write `sum_rule(x, x_bdim, dim, keepdim)`, the batching rule of `torch.sum(sample, dim, keepdim)`: `x` holds
# the batch at dim `x_bdim` (an int, never `None` here); `dim` is in the sample's numbering and is an int (maybe
# negative), a tuple of ints, or `None` (every dim of the sample). Return `(out, out_bdim)` where `out` holds each
# sample's sum and `out_bdim` says where its batch dim is. The batch dim is never summed over.
#
# For example, samples of shape `(3, 4)` stacked at dim 1 give `x` of shape `(3, B, 4)`; `sum_rule(x, 1, -1,
# False)` may return a `(B, 3)` tensor and `0`.

# %% nbgrader="solution" id="sum_rule"
def sum_rule(x, x_bdim, dim, keepdim=False):
    ### BEGIN SOLUTION
    x = x.movedim(x_bdim, 0)
    ndim = x.ndim - 1  # a sample's
    if dim is None:
        dims = tuple(range(1, ndim + 1))
    else:
        dims = tuple(d % ndim + 1 for d in (dim if isinstance(dim, tuple) else (dim,)))
    return x.sum(dims, keepdim), 0
    ### END SOLUTION

# %% nbgrader="tests" id="sum_rule-tests" points=3
# Exercise 06c.sum_rule: the visible tests (no output: they pass; grading adds hidden tests)
samples = [torch.tensor([[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 0.0], [3.0, 1.0, -2.0, 1.0]]) * (s + 1)
           for s in range(5)]  # five samples of shape (3, 4)
for bdim in (0, 1, 2):
    x = batched(samples, bdim)
    for dim, keepdim in ((1, False), (0, False), (-1, False), (0, True), ((0, 1), False), ((1, -2), True),
                         (None, False)):
        what = f"sum_rule(x, {bdim}, {dim}, {keepdim}), samples (3, 4) stacked at dim {bdim}"
        got = rule_result(what, sum_rule, x, bdim, dim, keepdim)
        expected = loop(lambda s: s.sum(dim, keepdim) if dim is not None else s.sum(), samples)
        assert close(got, expected), (f"{what}: expected each sample's sum, got other values (batch moved first)"
                                      f"\nexpected\n{expected}\ngot\n{got}")
x = batched(samples, 1)
with your_rule("sum", sum_rule):
    got = attempt("vmap(lambda s: s.sum(-1), in_dims=1)(x) with your rule",
                  vmap(lambda s: s.sum(-1), in_dims=1), x)
assert close(got, loop(lambda s: s.sum(-1), samples)), \
    f"vmap with your rule: expected each sample's row sums, got {got}"
small, large = (ops_run(sum_rule, batched(samples[:n], 1), 1, 0, False) for n in (2, 5))
assert small == large, (f"your rule ran {small} ops for a batch of 2 and {large} for a batch of 5: expected the same "
                        "number (a batching rule calls the op once on the whole batch, not once per sample)")
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a06c_vmap.py, sum_rule
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="mm_rule-text"
# ## Exercise 2: a matrix product, the batch on either side (3 points)
#
# Write `mm_rule(a, a_bdim, b, b_bdim)`, the batching rule of `torch.mm(a_sample, b_sample)` (an `(n, k)` matrix
# times a `(k, m)` one). Either operand may be unbatched (its bdim `None`: the same matrix for every sample), but
# not both. Return `(out, out_bdim)` with each sample's `(n, m)` product. `torch.bmm` multiplies two batches of
# matrices (batch first); `torch.matmul` broadcasts a matrix against a batch of matrices.

# %% nbgrader="solution" id="mm_rule"
def mm_rule(a, a_bdim, b, b_bdim):
    ### BEGIN SOLUTION
    if a_bdim is not None and b_bdim is not None:
        return torch.bmm(a.movedim(a_bdim, 0), b.movedim(b_bdim, 0)), 0
    if a_bdim is not None:
        return torch.matmul(a.movedim(a_bdim, 0), b), 0
    return torch.matmul(a, b.movedim(b_bdim, 0)), 0
    ### END SOLUTION

# %% nbgrader="tests" id="mm_rule-tests" points=3
# Exercise 06c.mm_rule: the visible tests (no output: they pass; grading adds hidden tests)
A = [torch.tensor([[1.0, 2.0, 0.0], [0.0, -1.0, 3.0]]) + s for s in range(4)]  # four (2, 3) matrices
Bm = [torch.tensor([[1.0, 0.5], [2.0, -1.0], [0.0, 1.0]]) * (s - 1.5) for s in range(4)]  # four (3, 2) matrices
for a_bdim, b_bdim in ((0, 0), (1, 2), (2, 1), (0, None), (2, None), (None, 0), (None, 1), (None, 2)):
    a = A[1] if a_bdim is None else batched(A, a_bdim)
    b = Bm[2] if b_bdim is None else batched(Bm, b_bdim)
    what = (f"mm_rule(a, {a_bdim}, b, {b_bdim}), a: " + ("one (2, 3) matrix" if a_bdim is None else
            f"(2, 3) matrices stacked at dim {a_bdim}") + ", b: " +
            ("one (3, 2) matrix" if b_bdim is None else f"(3, 2) matrices stacked at dim {b_bdim}"))
    got = rule_result(what, mm_rule, a, a_bdim, b, b_bdim)
    expected = loop(torch.mm, [A[1]] * 4 if a_bdim is None else A, [Bm[2]] * 4 if b_bdim is None else Bm)
    assert close(got, expected), (f"{what}: expected each sample's product, got other values (batch moved first)"
                                  f"\nexpected\n{expected}\ngot\n{got}")
with your_rule("mm", mm_rule):
    got = attempt("vmap(torch.mm, in_dims=(None, 2))(A[0], b) with your rule",
                  vmap(torch.mm, in_dims=(None, 2)), A[0], batched(Bm, 2))
assert close(got, loop(torch.mm, [A[0]] * 4, Bm)), f"vmap with your rule: expected A[0] @ each b, got {got}"
small, large = (ops_run(mm_rule, batched(A[:n], 0), 0, batched(Bm[:n], 1), 1) for n in (2, 4))
assert small == large, (f"your rule ran {small} ops for a batch of 2 and {large} for a batch of 4: expected the same "
                        "number (a batching rule calls the op once on the whole batch, not once per sample)")
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a06c_vmap.py, mm_rule
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="index_select_rule-text"
# ## Exercise 3: picking rows, indices per sample (3 points)
#
# Write `index_select_rule(x, x_bdim, dim, index, index_bdim)`, the batching rule of
# `torch.index_select(x_sample, dim, index_sample)`: a sample's `index` is a 1-D tensor of integers and the result
# holds the sample's entries `index[0], index[1], ...` along `dim` (an int, maybe negative). `x` or `index` may be
# unbatched (bdim `None`), not both. With a batched `index`, **each sample picks with its own indices**. Return
# `(out, out_bdim)`. (Indexing a tensor with two integer tensors, `t[rows, cols]`, picks `t[rows[i], cols[i]]`
# with `rows` and `cols` broadcast together.)

# %% nbgrader="solution" id="index_select_rule"
def index_select_rule(x, x_bdim, dim, index, index_bdim):
    ### BEGIN SOLUTION
    ndim = x.ndim - (x_bdim is not None)  # a sample's
    dim = dim % ndim + 1  # in the batch, batch first
    if index_bdim is None:
        return torch.index_select(x.movedim(x_bdim, 0), dim, index), 0
    index = index.movedim(index_bdim, 0)  # (B, k)
    size = index.shape[0]
    x = x.unsqueeze(0).expand(size, *x.shape) if x_bdim is None else x.movedim(x_bdim, 0)
    rows = torch.arange(size).unsqueeze(1)  # (B, 1): sample i picks from its own x with its own indices
    return x.movedim(dim, 1)[rows, index].movedim(1, dim), 0
    ### END SOLUTION

# %% nbgrader="tests" id="index_select_rule-tests" points=3
# Exercise 06c.index_select_rule: the visible tests (no output: they pass; grading adds hidden tests)
X = [torch.arange(12.0).reshape(3, 4) * (s + 1) for s in range(3)]  # three (3, 4) samples
I = [torch.tensor([2, 0]), torch.tensor([1, 1]), torch.tensor([0, 2])]  # three index samples for dim 0
J = [torch.tensor([3, 0, 1]), torch.tensor([1, 2, 2]), torch.tensor([0, 0, 3])]  # three for dim 1
for dim, index_samples in ((0, I), (1, J), (-1, J), (-2, I)):
    for x_bdim, index_bdim in ((0, None), (2, None), (None, 0), (1, 0), (2, 0)):
        x = X[1] if x_bdim is None else batched(X, x_bdim)
        index = index_samples[0] if index_bdim is None else batched(index_samples, index_bdim)
        what = (f"index_select_rule(x, {x_bdim}, {dim}, index, {index_bdim}), x: " +
                ("one (3, 4) tensor" if x_bdim is None else f"(3, 4) samples stacked at dim {x_bdim}") +
                ", index: " + ("one for every sample" if index_bdim is None else "one per sample"))
        got = rule_result(what, index_select_rule, x, x_bdim, dim, index, index_bdim)
        expected = loop(lambda s, i: torch.index_select(s, dim, i), [X[1]] * 3 if x_bdim is None else X,
                        [index_samples[0]] * 3 if index_bdim is None else index_samples)
        assert close(got, expected), (f"{what}: expected each sample's pick, got other values (batch moved first)"
                                      f"\nexpected\n{expected}\ngot\n{got}")
with your_rule("index_select", index_select_rule):
    got = attempt("vmap(lambda s, i: torch.index_select(s, 1, i))(xs, indices) with your rule",
                  vmap(lambda s, i: torch.index_select(s, 1, i)), batched(X, 0), batched(J, 0))
assert close(got, loop(lambda s, i: torch.index_select(s, 1, i), X, J)), \
    f"vmap with your rule: expected each sample's columns picked with its own indices, got {got}"
small, large = (ops_run(index_select_rule, batched(X[:n], 0), 0, 1, batched(J[:n], 0), 0) for n in (2, 3))
assert small == large, (f"your rule ran {small} ops for a batch of 2 and {large} for a batch of 3: expected the same "
                        "number (a batching rule calls the op once on the whole batch, not once per sample)")
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a06c_vmap.py, index_select_rule
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="per_sample_grads-text"
# ## Exercise 4: per-sample gradients (3 points)
#
# `loss(params, x, y)` (setup cell) is the mean cross-entropy of a linear classifier on a batch (`x` of shape
# `(N, 4)`, `y` of shape `(N,)`). Write `per_sample_grads(params, xs, ys)`: the gradient of the loss of each
# sample alone with respect to `params = (W, b)`, as a tuple `(dW, db)` with shapes `(N, *W.shape)` and
# `(N, *b.shape)`. Sample `i`'s gradient is `grad(loss)(params, xs[i:i+1], ys[i:i+1])`, but compute them all in
# **one** backward pass, with `vmap` and `grad`, as PyTorch's per-sample-gradient tutorial does. (`loss` wants a
# batch: inside vmap, your function sees one sample.)

# %% nbgrader="solution" id="per_sample_grads"
def per_sample_grads(params, xs, ys):
    ### BEGIN SOLUTION
    def sample_loss(params, x, y):
        return loss(params, x.unsqueeze(0), y.unsqueeze(0))
    return vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, xs, ys)
    ### END SOLUTION

# %% nbgrader="tests" id="per_sample_grads-tests" points=3
# Exercise 06c.per_sample_grads: the visible tests (no output: they pass; grading adds hidden tests)
params = (W_TRUE, torch.tensor([0.1, -0.2, 0.3]))
xs = torch.tensor([[1.0, 0.0, -1.0, 2.0], [0.5, 1.5, 0.0, -1.0], [-1.0, 2.0, 1.0, 0.0],
                   [0.0, -0.5, 2.0, 1.0], [2.0, 1.0, 0.5, -0.5], [1.0, 1.0, 1.0, 1.0]])
ys = torch.tensor([0, 2, 1, 1, 0, 2])
passes, got = attempt("per_sample_grads(params, xs, ys), 6 samples", backward_passes, per_sample_grads, params, xs, ys)
assert isinstance(got, (tuple, list)) and len(got) == 2, f"expected a tuple (dW, db), got {type(got).__name__}"
for k, (name, g, p) in enumerate(zip(("dW", "db"), got, params)):
    assert isinstance(g, torch.Tensor) and tuple(g.shape) == (6, *p.shape), \
        f"{name}: expected shape {(6, *p.shape)} (one gradient per sample), got {getattr(g, 'shape', g)}"
    expected = loop(lambda x, y: grad(loss)(params, x.unsqueeze(0), y.unsqueeze(0))[k], xs, ys)
    assert close(g, expected), f"{name}: sample i's gradient is grad(loss)(params, xs[i:i+1], ys[i:i+1]):\n" \
                               f"expected\n{expected}\ngot\n{g}"
assert passes == 1, (f"per_sample_grads ran {passes} backward passes for 6 samples: vmap(grad(...)) computes every "
                     "sample's gradient in one")
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a06c_vmap.py, per_sample_grads
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="outro"
# ## Before you submit
#
# *Kernel > Restart Kernel and Run All Cells*, then **Validate**. "Success" means your notebook passes the
# visible tests, which catch the mistakes students make most often. Grading runs the same functions on **hidden
# cases**: random shapes, batch dims anywhere, negative and tuple dims, float32, your rules inside `vmap` and
# nested in other ops, and the number of ops and backward passes your code runs. Code that is right, not just right
# on the visible examples, passes them.
