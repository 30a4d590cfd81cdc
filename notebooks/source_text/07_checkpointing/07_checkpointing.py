# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader="readonly" id="intro"
# # Assignment 07: gradient checkpointing
#
# Chapter 7 in five lines:
#
# - Backward needs activations; a checkpointed segment keeps only its **input**, runs forward without a
#   graph, and in backward runs the segment **again**, with a graph, to backpropagate through it.
# - The trade: with `s` segments of an `L`-layer network, memory falls to about `s - 1 + L/s`
#   activations; the price is one extra forward pass through the checkpointed segments.
# - The last segment gains nothing from checkpointing (its backward runs right after forward).
# - Randomness (dropout) must be **replayed**: save the generator's state in forward, restore it for
#   the recomputation, then put the generator back where it was.
# - `chibigrad.memory` counts bytes: `memory.measure()` (`.kept`: bytes still alive after the block),
#   `memory.reset_peak()`, `memory.saved()`, `memory.max_saved()`.
#
# Write your code where a cell says `raise NotImplementedError("Exercise ...")` (delete that line). The
# cell after each solution runs visible tests; grading adds hidden ones (dropout, frozen parameters,
# nested checkpoints, memory measurements, other depths and budgets). The exercises are graded
# separately: don't use one exercise's answer in another.

# %% nbgrader="readonly" id="setup"
import linecache
import sys
import traceback

import numpy as np

import chibigrad as torch
from chibigrad import memory, nn
from chibigrad.autograd import Function
from chibigrad.utils.checkpoint import checkpoint, checkpoint_sequential

import chibigrad.tracebacks
from IPython import get_ipython

chibigrad.tracebacks.install()  # errors read as in PyTorch: your frames and the message, not chibigrad's


def close(a, b, tol=1e-5):
    """True when tensors (or arrays, numbers) a and b have the same shape and values."""
    a, b = [np.asarray(v.detach() if isinstance(v, torch.Tensor) else v, dtype=np.float64) for v in (a, b)]
    return a.shape == b.shape and np.allclose(a, b, rtol=tol, atol=tol)


def mlp(depth, width=32, dropout=0.0):
    """depth blocks of Linear(width, width), optional Dropout, Tanh, as one flat nn.Sequential."""
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width)] + ([nn.Dropout(dropout)] if dropout else []) + [nn.Tanh()]
    return nn.Sequential(*layers)


def gradients(model, run, x, seed=0):
    """Output and gradients (the parameters', then x's) of one step: loss = run(x).pow(2).mean()."""
    model.zero_grad(set_to_none=True)
    x.grad = None
    torch.manual_seed(seed)
    out = run(x)
    out.pow(2).mean().backward()
    return out.detach(), [p.grad for p in model.parameters()] + [x.grad]


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


def first_difference(grads, reference):
    """'' when the gradients match, else a sentence naming the first one that differs and by how much."""
    for k, (g, r) in enumerate(zip(grads, reference)):
        what = "x" if k == len(reference) - 1 else f"parameter {k}"
        if g is None:
            return f"{what} got no gradient (None)"
        if not close(g, r):
            return f"the gradient of {what} differs from the one without checkpointing by up to " \
                   f"{float((g - r).abs().max()):.3g}"
    return ""

# %% [markdown] nbgrader="readonly" id="checkpoint_fn-text"
# ## Exercise 1: a checkpoint Function that the parameters can see (4 points)
#
# chibigrad's `checkpoint` is one Function whose backward calls `backward()` on the recomputed graph, so
# the parameters inside get their `.grad` *behind the engine's back*: its node has no edges to them, and
# `torch.autograd.grad(loss, params)` cannot reach them. Write the other way: a Function that takes the
# parameters as inputs, used as
#
#     out = CheckpointFn.apply(module, x, *module.parameters())
#
# - `forward(ctx, module, x, *params)`: run `module(x)` (forward runs with recording off: no graph, no
#   activations), keep `x` with `save_for_backward`, the module on `ctx`, and the random generator's state
#   (`torch.get_rng_state()`).
# - `backward(ctx, grad)`: recompute `module(inner)` from a detached copy
#   `inner = x.detach().requires_grad_(...)`, under `torch.enable_grad()` and with the generator set to the
#   saved state (`torch.set_rng_state`), then put the generator back as it was. Get the gradients of
#   `inner` and of the parameters with `torch.autograd.grad(out, [...], grad, allow_unused=True)` and
#   **return** them: `None` for `module`, then `x`'s, then one per parameter. The engine adds them to
#   `.grad`; don't call `backward()` yourself.
# - Return `None` for `x`, or a parameter, whose `ctx.needs_input_grad` entry is `False`.
#
# Don't use chibigrad's `checkpoint` here.

# %% nbgrader="solution" id="checkpoint_fn"
class CheckpointFn(Function):
    @staticmethod
    def forward(ctx, module, x, *params):
        ### BEGIN SOLUTION
        ctx.module = module
        ctx.rng_state = torch.get_rng_state()
        ctx.save_for_backward(x)
        return module(x)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad):
        ### BEGIN SOLUTION
        (x,) = ctx.saved_tensors
        needs_x, needs_params = ctx.needs_input_grad[1], ctx.needs_input_grad[2:]
        inner = x.detach().requires_grad_(needs_x)
        resume = torch.get_rng_state()
        torch.set_rng_state(ctx.rng_state)
        try:
            with torch.enable_grad():
                out = ctx.module(inner)
        finally:
            torch.set_rng_state(resume)
        params = [p for p, needed in zip(ctx.module.parameters(), needs_params) if needed]
        wanted = ([inner] if needs_x else []) + params
        found = iter(torch.autograd.grad(out, wanted, grad, allow_unused=True) if wanted else ())
        grad_x = next(found) if needs_x else None
        return (None, grad_x) + tuple(next(found) if needed else None for needed in needs_params)
        ### END SOLUTION

# %% nbgrader="tests" id="checkpoint_fn-tests" points=4
# Exercise 07.checkpoint_fn: the visible tests (no output: they pass; grading adds hidden tests)
torch.manual_seed(0)
model = mlp(3)
x = torch.randn(8, 32, requires_grad=True)
ref_out, ref_grads = gradients(model, model, x)
out, grads = attempt("a training step through CheckpointFn", gradients, model,
                     lambda x: CheckpointFn.apply(model, x, *model.parameters()), x)
assert close(out, ref_out), "the checkpointed output differs from model(x)"
assert all(g is not None for g in grads), "every parameter (and x) should get a gradient"
assert all(close(g, r) for g, r in zip(grads, ref_grads)), "the gradients differ from those without checkpointing"
out = CheckpointFn.apply(model, x, *model.parameters())
assert out.grad_fn.name() == "CheckpointFnBackward", f"grad_fn: {out.grad_fn}"
reached = attempt("torch.autograd.grad(out.sum(), parameters)", torch.autograd.grad, out.sum(),
                  list(model.parameters()))
assert all(g is not None for g in reached), "autograd.grad should reach the parameters through your Function"
with memory.measure() as m:
    out = CheckpointFn.apply(model, x, *model.parameters())
assert m.kept <= out.numel() * 4, f"forward kept {m.kept} bytes; only its output ({out.numel() * 4} bytes) should stay"
drop = mlp(2, dropout=0.5)
ref = gradients(drop, drop, x, seed=3)
got = gradients(drop, lambda x: CheckpointFn.apply(drop, x, *drop.parameters()), x, seed=3)
assert all(close(g, r) for g, r in zip(got[1], ref[1])), "with dropout: replay the random state in backward"
draws = []
for run in (drop, lambda x: CheckpointFn.apply(drop, x, *drop.parameters())):
    torch.manual_seed(4)
    out = run(x)
    before = torch.rand(3)  # drawn between forward and backward
    out.sum().backward()
    draws.append((before, torch.rand(3)))
assert close(draws[1][1], draws[0][1]), \
    ("the random numbers drawn after backward are not those drawn without checkpointing: after the recomputation, "
     "put the generator back where it was (torch.set_rng_state with the state from before the replay)")
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a07_checkpointing.py, checkpoint_fn
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="checkpoint_segments-text"
# ## Exercise 2: checkpoint segments of any length (3 points)
#
# `checkpoint_sequential(model, s, x)` cuts a model into `s` **equal** segments. Layers differ in what
# they keep (a wide layer keeps more than a narrow one), so you may want to cut elsewhere. Write
# `checkpoint_segments(layers, boundaries, x)`:
#
# - `layers` is a list of modules, `boundaries` an increasing list of indices `0 < b1 < b2 < ... < len(layers)`
#   where a new segment starts: `layers[:b1]`, `layers[b1:b2]`, ..., `layers[bk:]`. No boundaries: one
#   segment.
# - Run every segment but the last through chibigrad's `checkpoint(run_segment, inp, use_reentrant=False)`,
#   where `run_segment(inp)` applies that segment's layers in order; run the last segment normally.
#   Return the output.
# - `checkpoint` calls `run_segment` again during backward, long after your loop has moved on. A
#   function defined in a loop that reads the loop's variables sees their **last** values then.
#
# Don't call `checkpoint_sequential`. **The grader reads your code:** if `checkpoint_segments` or anything
# it uses names `checkpoint_sequential` or copies a function (`__code__`, `FunctionType`), this exercise
# scores 0.
# Code the grader cannot read (`exec`, `eval`, `getattr` with a computed name, `globals()`, `get_ipython()`, a
# magic such as `%run`, a module of your own) outside the other exercises' answers scores it 0 too.

# %% nbgrader="solution" id="checkpoint_segments"
def checkpoint_segments(layers, boundaries, x):
    """Run layers in order; every segment but the last is checkpointed."""
    ### BEGIN SOLUTION
    def segment(part):
        def run_segment(inp):
            for layer in part:
                inp = layer(inp)
            return inp
        return run_segment

    starts = [0] + list(boundaries)
    ends = list(boundaries) + [len(layers)]
    for start, end in zip(starts[:-1], ends[:-1]):
        x = checkpoint(segment(layers[start:end]), x, use_reentrant=False)
    return segment(layers[starts[-1]:])(x)
    ### END SOLUTION

# %% nbgrader="tests" id="checkpoint_segments-tests" points=3
# Exercise 07.checkpoint_segments: the visible tests (no output: they pass; grading adds hidden tests)
torch.manual_seed(1)
model = mlp(4)
layers = list(model.children())
x = torch.randn(8, 32, requires_grad=True)
ref_out, ref_grads = gradients(model, model, x)
for boundaries in ([], [2], [2, 3, 6]):
    out, grads = attempt(f"a training step with boundaries {boundaries}", gradients, model,
                         lambda x: checkpoint_segments(layers, boundaries, x), x)
    assert close(out, ref_out), f"boundaries {boundaries}: the output differs from model(x)"
    problem = first_difference(grads, ref_grads)
    assert not problem, (f"boundaries {boundaries}: {problem}. When backward recomputes a segment, does it run that "
                         "segment's layers? A function defined in a loop sees the loop variables' last values.")
calls = [0] * len(layers)
hooks = [layer.register_forward_hook(lambda m, i, o, k=k: calls.__setitem__(k, calls[k] + 1))
         for k, layer in enumerate(layers)]
checkpoint_segments(layers, [2, 5], x).sum().backward()
for h in hooks:
    h.remove()
assert calls == [2, 2, 2, 2, 2, 1, 1, 1], f"calls per layer {calls}: the two first segments run twice, the last once"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a07_checkpointing.py, checkpoint_segments
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="choose_segments-text"
# ## Exercise 3: the fewest segments that fit a memory budget (2 points)
#
# More segments cost more recomputation, so you want the **smallest** `s` whose memory fits. Write
# `choose_segments(model, x, budget)` for an `nn.Sequential` `model` of `L` layers: for `s = 1, 2, ..., L`,
# measure the peak of saved bytes during one training step
#
#     out = checkpoint_sequential(model, s, x, use_reentrant=False)
#     out.pow(2).mean().backward()
#
# as `memory.max_saved() - before`, where `before = memory.saved()` is read right after
# `memory.reset_peak()` and right before the forward. Return the smallest `s` whose peak is
# `<= budget` (bytes), or `None` if no `s` fits. (With `s = 1` nothing is checkpointed.) `s` need not
# divide `L`: `checkpoint_sequential` gives the remaining layers to the last segment, and the peak is not
# a smooth function of `s`, so measure every `s` rather than guess.

# %% nbgrader="solution" id="choose_segments"
def choose_segments(model, x, budget):
    """The fewest segments whose training step keeps at most `budget` saved bytes at its peak (or None)."""
    ### BEGIN SOLUTION
    for s in range(1, len(model) + 1):
        memory.reset_peak()
        before = memory.saved()
        loss = checkpoint_sequential(model, s, x, use_reentrant=False).pow(2).mean()
        loss.backward()
        if memory.max_saved() - before <= budget:
            return s
    return None
    ### END SOLUTION

# %% nbgrader="tests" id="choose_segments-tests" points=2
# Exercise 07.choose_segments: the visible tests (no output: they pass; grading adds hidden tests)
torch.manual_seed(2)
model = mlp(6, width=64)  # 12 layers
x = torch.randn(16, 64)
peaks = {}
for s in range(1, 13):
    memory.reset_peak()
    before = memory.saved()
    checkpoint_sequential(model, s, x, use_reentrant=False).pow(2).mean().backward()
    peaks[s] = memory.max_saved() - before
print({s: p // 1024 for s, p in peaks.items()}, "KiB")
got = choose_segments(model, x, peaks[1])
assert got == 1, f"a budget that fits the whole step: no checkpointing, expected s = 1, got {got}"
got = choose_segments(model, x, min(peaks.values()) - 1)
assert got is None, f"a budget below every peak: expected None, got {got}"
budget = (peaks[1] + min(peaks.values())) // 2
expected = min(s for s, p in peaks.items() if p <= budget)
got = choose_segments(model, x, budget)
assert got == expected, f"budget {budget}: expected s = {expected}, got {got} (reset the peak before each try?)"
deeper, x14 = mlp(7, width=64), torch.randn(16, 64)  # 14 layers
small = {}
for s in range(1, 5):
    memory.reset_peak()
    before = memory.saved()
    checkpoint_sequential(deeper, s, x14, use_reentrant=False).pow(2).mean().backward()
    small[s] = memory.max_saved() - before
expected = min(s for s, p in small.items() if p <= small[4])
got = choose_segments(deeper, x14, small[4])
assert got == expected, (f"14 layers, a budget of {small[4]} bytes: the fewest segments that fit is s = {expected} "
                         f"(peaks {small}), got {got}; try every s, not only those that divide the number of layers")
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a07_checkpointing.py, choose_segments
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="outro"
# ## Before you submit
#
# *Kernel > Restart Kernel and Run All Cells*, then **Validate**. "Success" means your notebook passes the
# visible tests, which catch the mistakes students make most often. Grading runs the same cells with **hidden
# tests** added to each tests cell: dropout, frozen parameters, nested checkpoints, memory measurements, other
# depths and budgets. Code that is right, not just right on the visible examples, passes them.
