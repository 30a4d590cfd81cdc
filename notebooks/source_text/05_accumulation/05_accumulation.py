# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader="readonly" id="intro"
# # Assignment 05: gradient accumulation
#
# Chapter 5 in five lines:
#
# - `backward()` **adds** into `.grad` (`AccumulateGrad`); it never overwrites.
# - Micro-batches add up to the big batch's gradient when each micro-batch's loss is scaled by its share of
#   the batch. The chapter divided by the number of micro-batches, which is right when they are equal.
# - `zero_grad()` sets `.grad` to `None` by default: an optimizer skips such a parameter entirely. With
#   `set_to_none=False` the gradient is a tensor of zeros, and a method with momentum still moves it.
# - `clip_grad_norm_` treats all gradients as one vector, scales them in place so its norm is at most
#   `max_norm`, and returns the norm from before clipping. Clip once, after accumulating.
# - Updates and clipping happen under `torch.no_grad()`, in place: the parameters stay the same tensors.
#
# Write your code where a cell says `raise NotImplementedError("Exercise ...")` (delete that line). The
# cell after each solution runs visible tests: no output means they pass. Grading adds hidden tests (uneven
# batches, float64 comparisons, several parameter groups, memory measurements). Each exercise is graded on
# its own: don't call one exercise's solution from another.

# %% nbgrader="readonly" id="setup"
import linecache
import math
import sys
import traceback

import numpy as np

import chibigrad as torch
import chibigrad.memory
import chibigrad.nn.functional as F
from chibigrad import nn, optim
from chibigrad.optim import Optimizer

import chibigrad.tracebacks
from IPython import get_ipython

chibigrad.tracebacks.install()  # errors read as in PyTorch: your frames and the message, not chibigrad's

NONFINITE = ("The total norm of order {} for gradients from `parameters` is non-finite, so it cannot be clipped. To "
             "disable this error and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")


def close(a, b, tol=1e-5):
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


# %% [markdown] nbgrader="readonly" id="accumulate-text"
# ## Exercise 1: micro-batches that add up to the big batch (3 points)
#
# Write `accumulate(model, loss_fn, inputs, targets, micro_batch)`: split the batch (the first dimension of
# `inputs` and `targets`, `N` samples) into consecutive micro-batches of `micro_batch` samples; **the last
# one may be smaller**. Run forward and backward on each in turn, so that the gradients added into the
# parameters' `.grad` equal those of `loss_fn` on the whole batch. `loss_fn(output, target)` is a *mean*
# over the samples (like `F.mse_loss`, `F.cross_entropy`).
#
# - A micro-batch of `n` samples contributes `n / N` of its mean loss.
# - Add into `.grad` as `backward` does: don't zero it first (the caller may be accumulating more).
# - The point of micro-batches is memory: at most one micro-batch's graph may exist at a time (the tests
#   measure the peak of `chibigrad.memory.saved()`), so call `backward` on each micro-batch before the next.
# - Return the whole batch's loss as a Python `float` (a tensor would keep a graph alive).

# %% nbgrader="solution" id="accumulate"
def accumulate(model, loss_fn, inputs, targets, micro_batch):
    """Backward over micro-batches; the .grad added equals the full batch's. Returns the batch loss (float)."""
    ### BEGIN SOLUTION
    total, n = 0.0, len(inputs)
    for start in range(0, n, micro_batch):
        part = slice(start, min(start + micro_batch, n))
        loss = loss_fn(model(inputs[part]), targets[part]) * ((part.stop - part.start) / n)
        loss.backward()
        total += loss.item()
    return total
    ### END SOLUTION

# %% nbgrader="tests" id="accumulate-tests" points=3
# Exercise 05.accumulate: the visible tests (no output: they pass; grading adds hidden tests)
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
inputs, targets = torch.randn(10, 3), torch.randn(10, 1)
full_loss = F.mse_loss(model(inputs), targets)
expected = torch.autograd.grad(full_loss, list(model.parameters()))
loss = accumulate(model, F.mse_loss, inputs, targets, 4)  # micro-batches of 4, 4 and 2
assert isinstance(loss, float), f"return a Python float, got {type(loss).__name__}"
assert close(loss, full_loss.item()), f"the batch loss is {full_loss.item()}, got {loss}"
for (name, p), e in zip(model.named_parameters(), expected):
    assert close(p.grad, e), f"{name}.grad differs from the full batch's gradient (micro-batches of 4, 4, 2)"
accumulate(model, F.mse_loss, inputs, targets, 3)
assert close(model[0].bias.grad, 2 * expected[1]), "accumulate adds into .grad: after two calls, twice the gradient"
big_inputs, big_targets = torch.randn(64, 3), torch.randn(64, 1)
with chibigrad.memory.measure() as one:
    F.mse_loss(model(big_inputs[:16]), big_targets[:16])
with chibigrad.memory.measure() as all_four:
    accumulate(model, F.mse_loss, big_inputs, big_targets, 16)
assert all_four.saved_peak <= 1.25 * one.saved_peak + 256, \
    (f"64 samples in micro-batches of 16: saved tensors peaked at {all_four.saved_peak} bytes, one micro-batch's "
     f"graph holds {one.saved_peak}: call backward on each micro-batch before building the next")
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a05_accumulation.py, accumulate
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="lion-text"
# ## Exercise 2: an optimizer that respects `set_to_none` (3 points)
#
# Lion (Chen et al., 2023) keeps one momentum buffer `m` per parameter (zeros at first) and, in every step,
# for each parameter `p` with gradient `g`:
#
#     p = p * (1 - lr * weight_decay)                   # decoupled weight decay
#     p = p - lr * sign(beta1 * m + (1 - beta1) * g)    # a step of the same size lr in every coordinate
#     m = beta2 * m + (1 - beta2) * g
#
# Write `Lion(params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0)`, a subclass of `Optimizer`: pass the
# hyper-parameters to `super().__init__(params, defaults)` as a dict, then read them from each of
# `self.param_groups` in `step`, so that every group can have its own. In `step(closure=None)`:
#
# - a parameter whose `.grad` is `None` is **skipped entirely**: not moved, no weight decay, no state. A
#   gradient of zeros is a gradient: the parameter still moves by its momentum (that is the difference
#   between `zero_grad()` and `zero_grad(set_to_none=False)`);
# - keep `m` in `self.state[p]["exp_avg"]`;
# - update in place under `torch.no_grad()` (the parameters stay the same tensors; their version grows);
# - if `closure` is given, call it first, with grad enabled (`torch.enable_grad()`), and return its value
#   (otherwise return `None`).

# %% nbgrader="solution" id="lion"
class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        ### BEGIN SOLUTION
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))
        ### END SOLUTION

    def step(self, closure=None):
        ### BEGIN SOLUTION
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        with torch.no_grad():
            for group in self.param_groups:
                lr, (beta1, beta2), decay = group["lr"], group["betas"], group["weight_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if "exp_avg" not in state:
                        state["exp_avg"] = torch.zeros_like(p)
                    m = state["exp_avg"]
                    p.mul_(1 - lr * decay)
                    p.add_((m * beta1 + p.grad * (1 - beta1)).sign(), alpha=-lr)
                    m.mul_(beta2).add_(p.grad, alpha=1 - beta2)
        return loss
        ### END SOLUTION

# %% nbgrader="tests" id="lion-tests" points=3
# Exercise 05.lion: the visible tests (no output: they pass; grading adds hidden tests)
a = torch.tensor([1.0, -2.0], requires_grad=True)
b = torch.tensor([3.0], requires_grad=True)
opt = Lion([a, b], lr=0.1, weight_decay=0.5)
a.grad = torch.tensor([0.3, -0.2])  # b.grad is None: b is skipped
attempt("Lion.step()", opt.step)
assert close(a, [1.0 * 0.95 - 0.1, -2.0 * 0.95 + 0.1]), f"after one step: a = {a}"
assert close(b, [3.0]) and b not in opt.state, "a parameter whose .grad is None is not touched (no decay, no state)"
assert close(opt.state[a]["exp_avg"], [0.003, -0.002]), f"m = 0.99 * 0 + 0.01 * g, got {opt.state[a]['exp_avg']}"
before = a.detach().clone()
opt.zero_grad(set_to_none=False)  # a.grad is now zeros: still a gradient
opt.step()
assert close(a, [before[0] * 0.95 - 0.1, before[1] * 0.95 + 0.1]), "a zero gradient still moves by momentum"
before = a.detach().clone()
opt.zero_grad()  # set_to_none=True: a.grad is None
opt.step()
assert close(a, before), "after zero_grad() the parameter has no gradient: step must not move it"
assert a.is_leaf and a.grad_fn is None, "update under torch.no_grad(): a must stay a leaf"
c = torch.tensor([0.0], requires_grad=True)
opt = Lion([c], lr=0.1)
c.grad = torch.tensor([1.0])
opt.step()  # c = -0.1, m = 0.01
c.grad = torch.tensor([-0.5])
opt.step()  # the step's sign is that of 0.9 * 0.01 + 0.1 * -0.5 < 0, so c goes up; then m is updated
assert close(c, [0.0]), (f"g = 1 then g = -0.5: Lion steps along sign(beta1 * m + (1 - beta1) * g) with the old m, "
                         f"then updates m: expected c = 0.0, got {c.detach()}")
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a05_accumulation.py, lion
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="clip_grad_norm_groups-text"
# ## Exercise 3: gradient clipping per parameter group (3 points)
#
# `torch.nn.utils.clip_grad_norm_` clips all gradients together. Large models often clip groups apart
# (embeddings with one limit, the rest with another). Write
# `clip_grad_norm_groups_(optimizer, max_norm, norm_type=2.0, error_if_nonfinite=False)` that clips each
# of `optimizer.param_groups` on its own:
#
# - a group's limit is its own `"max_norm"` entry if it has one, else `max_norm`;
# - a group's total norm is the `norm_type`-norm of all its gradients taken as one vector (parameters whose
#   `.grad` is `None` don't count); `norm_type` may be `math.inf` (the largest absolute value);
# - scale the group's gradients **in place** (same tensors, under `torch.no_grad()`) by
#   `min(1, limit / (total + 1e-6))`;
# - with `error_if_nonfinite=True`, a non-finite total raises `RuntimeError(NONFINITE.format(float(norm_type)))`
#   (PyTorch's message, defined above);
# - return a list with each group's total norm **before** clipping, as Python floats (0.0 for a group with no
#   gradients).
#
# Write it yourself: don't call chibigrad's `clip_grad_norm_`.

# %% nbgrader="solution" id="clip_grad_norm_groups"
def clip_grad_norm_groups_(optimizer, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Clip each parameter group's gradients to its own max norm, in place; return the norms before clipping."""
    ### BEGIN SOLUTION
    norm_type, totals = float(norm_type), []
    for group in optimizer.param_groups:
        grads = [p.grad for p in group["params"] if p.grad is not None]
        if not grads:
            totals.append(0.0)
            continue
        if norm_type == math.inf:
            total = max(g.abs().max().item() for g in grads)
        else:
            total = sum((g.abs() ** norm_type).sum().item() for g in grads) ** (1 / norm_type)
        if error_if_nonfinite and not math.isfinite(total):
            raise RuntimeError(NONFINITE.format(norm_type))
        scale = min(1.0, group.get("max_norm", max_norm) / (total + 1e-6))
        with torch.no_grad():
            for g in grads:
                g.mul_(scale)
        totals.append(total)
    return totals
    ### END SOLUTION

# %% nbgrader="tests" id="clip_grad_norm_groups-tests" points=3
# Exercise 05.clip_grad_norm_groups: the visible tests (no output: they pass; grading adds hidden tests)
w1, w2, w3 = [torch.zeros(2, requires_grad=True) for _ in range(3)]
opt = optim.SGD([{"params": [w1, w2]}, {"params": [w3], "max_norm": 100.0}], lr=0.1)
w1.grad, w2.grad, w3.grad = torch.tensor([3.0, 0.0]), torch.tensor([0.0, 4.0]), torch.tensor([6.0, 8.0])
g1 = w1.grad
norms = clip_grad_norm_groups_(opt, 1.0)
assert isinstance(norms, list) and len(norms) == 2, f"one norm per group, as a list: got {norms!r}"
assert all(isinstance(n, float) for n in norms), "return the norms as Python floats"
assert close(norms, [5.0, 10.0]), f"norms before clipping: [5, 10], got {norms}"
assert w1.grad is g1, "scale the gradients in place: .grad must stay the same tensor"
assert close(w1.grad, [0.6, 0.0]) and close(w2.grad, [0.0, 0.8]), "group 0 (norm 5) is scaled to norm 1"
assert close(w3.grad, [6.0, 8.0]), "group 1 has its own max_norm, 100: its norm 10 is below, nothing changes"
assert close(clip_grad_norm_groups_(opt, 1.0, norm_type=math.inf), [0.8, 8.0]), "with norm_type=inf: the largest |g|"
library = torch.nn.utils.clip_grad_norm_  # the exercise is to write the clipping: the library's is refused here


def refuse(*args, **kwargs):
    raise AssertionError("clip_grad_norm_groups_ called chibigrad's clip_grad_norm_: write the clipping yourself")


code, library.__code__ = library.__code__, refuse.__code__
try:
    w1.grad = torch.tensor([3.0, 4.0])
    clip_grad_norm_groups_(opt, 1.0)
finally:
    library.__code__ = code
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a05_accumulation.py, clip_grad_norm_groups
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="outro"
# ## Before you submit
#
# *Kernel > Restart Kernel and Run All Cells*, then **Validate**. "Success" means your notebook passes the
# visible tests, which catch the mistakes students make most often. Grading runs the same cells with **hidden
# tests** added to each tests cell: uneven micro-batches and memory peaks, several parameter groups, momentum
# over many steps, closures, infinite and non-finite norms. Code that is right, not just right on the visible
# examples, passes them.
