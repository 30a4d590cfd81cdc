# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader="readonly" id="intro"
# # Assignment 03: the life of a graph
#
# Chapter 3 in six lines:
#
# - Each node keeps what its backward formula needs, as **saved tensors** (`grad_fn.saved_tensors_info`
#   lists them; `chibigrad.memory.saved()` counts their bytes).
# - Backward **frees** each node's saved tensors right after running it, unless `retain_graph=True`.
#   The nodes and their `next_functions` stay; only the saved data goes. `node.release_saved()` is what
#   the engine calls.
# - Unpacking a freed saved tensor raises *"Trying to backward through the graph a second time ..."*.
# - Several losses sharing nodes: `retain_graph=True` on every backward but the last, or sum the losses.
# - `create_graph=True` records the backward pass itself, so a gradient can be differentiated again.
# - A graph lives as long as something refers to it: `total = total + loss` keeps every step's graph.
#
# Write your code where a cell says `raise NotImplementedError("Exercise ...")` (delete that line). The
# cell after each solution runs visible tests: no output means they pass. Grading adds hidden tests (other
# shapes and dtypes, float64 finite-difference checks, deep graphs, memory measurements). Each exercise is
# graded on its own: don't call one exercise's solution from another.

# %% nbgrader="readonly" id="setup"
import gc
import linecache
import sys
import traceback
import weakref

import numpy as np

import chibigrad as torch
import chibigrad.memory
from chibigrad import nn
from chibigrad.autograd import Function
from chibigrad.autograd.engine import topological_order
from chibigrad.autograd.node import FREED_MESSAGE

import chibigrad.tracebacks
from IPython import get_ipython

chibigrad.tracebacks.install()  # errors read as in PyTorch: your frames and the message, not chibigrad's


def close(a, b, tol=1e-5):
    """True when tensors (or arrays, numbers) a and b have the same shape and values."""
    a, b = [np.asarray(v.detach() if isinstance(v, torch.Tensor) else v, dtype=np.float64) for v in (a, b)]
    return a.shape == b.shape and np.allclose(a, b, rtol=tol, atol=tol)


def raises_freed(fn):
    """True when fn() raises the engine's 'backward through the graph a second time' error."""
    try:
        fn()
    except RuntimeError as err:
        return str(err) == FREED_MESSAGE
    return False


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


# %% [markdown] nbgrader="readonly" id="leaky_relu-text"
# ## Exercise 1: a Function that saves one byte per element (3 points)
#
# `leaky_relu(x) = x` where `x > 0` and `negative_slope * x` elsewhere; its derivative is 1 where `x > 0`
# and `negative_slope` elsewhere (at 0 too, as in PyTorch). Write `LeakyReLU`, an `autograd.Function` with
# `forward(ctx, x, negative_slope)` (`negative_slope` is a Python float).
#
# Backward only needs to know *which* elements were positive. Save exactly that, a boolean mask (one byte
# per element, where the input would cost 4 or 8), with `ctx.save_for_backward`, so that the engine
# manages its life:
#
# - while the graph waits for backward, `chibigrad.memory.saved()` has grown by the mask's bytes only;
# - backward frees it: afterwards nothing your Function made is alive (a tensor or array kept as a `ctx`
#   attribute is out of the engine's reach; a number such as `negative_slope` costs nothing there);
# - a second backward then raises PyTorch's *"Trying to backward through the graph a second time ..."*
#   error, and with `retain_graph=True` on the first one the second works;
# - the result has `x`'s shape and dtype; write backward with tensor operations (`torch.where` helps).

# %% nbgrader="solution" id="leaky_relu"
class LeakyReLU(Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        ### BEGIN SOLUTION
        positive = x > 0
        ctx.save_for_backward(positive)
        ctx.negative_slope = negative_slope
        return torch.where(positive, x, x * negative_slope)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad):
        ### BEGIN SOLUTION
        (positive,) = ctx.saved_tensors
        return torch.where(positive, grad, grad * ctx.negative_slope), None
        ### END SOLUTION

# %% nbgrader="tests" id="leaky_relu-tests" points=3
# Exercise 03.leaky_relu: the visible tests (no output: they pass; grading adds hidden tests)
x = torch.tensor([-2.0, -0.5, 0.0, 0.5, 3.0], requires_grad=True)
before = chibigrad.memory.saved()
y = LeakyReLU.apply(x, 0.1)
assert close(y, [-0.2, -0.05, 0.0, 0.5, 3.0]), f"forward: got {y}"
assert y.dtype == x.dtype, f"the result should have x's dtype {x.dtype}, got {y.dtype}"
assert y.grad_fn is not None and y.grad_fn.name() == "LeakyReLUBackward", f"grad_fn: got {y.grad_fn}"
kept = chibigrad.memory.saved() - before
assert kept == 5, f"5 elements: save a 5-byte boolean mask for backward, {kept} bytes are saved"
(y * torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])).sum().backward(retain_graph=True)
assert close(x.grad, [0.1, 0.2, 0.3, 4.0, 5.0]), f"x.grad: got {x.grad} (at 0 the slope is negative_slope)"
y.sum().backward()  # the graph was retained: this works, and frees it
assert chibigrad.memory.saved() == before, "backward without retain_graph should have freed the mask"
assert raises_freed(lambda: y.sum().backward()), "a third backward should raise the 'second time' error"
x2, v = torch.tensor([-1.0, 2.0], requires_grad=True), torch.tensor([1.0, 1.0], requires_grad=True)
(gx,) = attempt("autograd.grad(LeakyReLU.apply(x, 0.1), x, v, create_graph=True)",
                lambda: torch.autograd.grad(LeakyReLU.apply(x2, 0.1), x2, v, create_graph=True))
assert gx.grad_fn is not None, ("with create_graph=True the gradient depends on grad_output (v, which requires "
                                "grad), but yours has no grad_fn: write backward with tensor operations, not numpy")
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a03_graph_lifetime.py, leaky_relu
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="per_loss_grads-text"
# ## Exercise 2: one gradient per loss, nothing left behind (3 points)
#
# Gradient surgery (PCGrad), per-task gradient norms and loss balancing need each loss's gradient on its own,
# on models where several heads share an encoder. Write `per_loss_grads(losses, params)`: a list with, for
# each loss, a tuple of its gradients with respect to `params`, in order. A parameter a loss does not
# depend on gets zeros (not `None`).
#
# - Use `torch.autograd.grad`: it returns the gradients and leaves every `.grad` alone (the caller's
#   `.grad` must not change).
# - The losses share nodes, so keep the graph (`retain_graph=True`) for every call but the last.
# - When you return, **no saved tensor of the losses' graphs may be held any more**, although the caller
#   still holds the losses. Careful: a walk with `retain_graph=True` frees nothing, and `autograd.grad`
#   runs (and frees) only the nodes that lead to `params`. Free what is left yourself with
#   `node.release_saved()` on every node of the losses' graphs (`topological_order(roots)`, imported
#   above, lists them, given the losses' `grad_fn`s).
#
# The per-loss gradients add up to the gradient of the summed loss: the tests check that too.

# %% nbgrader="solution" id="per_loss_grads"
def per_loss_grads(losses, params):
    """[(d loss / d p for p in params) for loss in losses]; every saved tensor of their graphs freed."""
    ### BEGIN SOLUTION
    result = []
    for k, loss in enumerate(losses):
        grads = torch.autograd.grad(loss, params, retain_graph=k < len(losses) - 1, allow_unused=True)
        result.append(tuple(torch.zeros_like(p) if g is None else g for g, p in zip(grads, params)))
    for node in topological_order([loss.grad_fn for loss in losses if loss.grad_fn is not None]):
        node.release_saved()
    return result
    ### END SOLUTION

# %% nbgrader="tests" id="per_loss_grads-tests" points=3
# Exercise 03.per_loss_grads: the visible tests (no output: they pass; grading adds hidden tests)
torch.manual_seed(0)
encoder, head_a, head_b = nn.Linear(4, 3), nn.Linear(3, 1), nn.Linear(3, 2)
params = [encoder.weight, encoder.bias, head_a.weight]
before = chibigrad.memory.saved()
features = encoder(torch.randn(5, 4)).tanh()
loss_a, loss_b = head_a(features).pow(2).mean(), head_b(features).pow(2).mean()
summed = torch.autograd.grad(loss_a + loss_b, params, retain_graph=True)  # the reference, computed first
grads = attempt("per_loss_grads([loss_a, loss_b], params)", per_loss_grads, [loss_a, loss_b], params)
assert len(grads) == 2 and all(len(g) == 3 for g in grads), "one tuple per loss, one gradient per parameter"
assert all(p.grad is None for p in params), "use torch.autograd.grad: .grad must stay untouched"
assert close(grads[1][2], torch.zeros(1, 3)), f"loss_b does not depend on head_a.weight: zeros, got {grads[1][2]}"
for k, name in enumerate(["encoder.weight", "encoder.bias", "head_a.weight"]):
    assert close(grads[0][k] + grads[1][k], summed[k]), f"{name}: per-loss gradients do not add up to the sum's"
assert chibigrad.memory.saved() == before, \
    f"{chibigrad.memory.saved() - before} bytes of saved tensors are still held: free every node's saved tensors"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a03_graph_lifetime.py, per_loss_grads
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="hvp-text"
# ## Exercise 3: Hessian-vector products (3 points)
#
# Newton-type methods, influence functions and sharpness measures need the Hessian `H` of a scalar `f`
# times a vector `v`, without ever forming `H`: `Hv` is the gradient of `g · v`, where `g` is the gradient
# of `f`. Write `hvp(f, params, vectors)`: `f(*params)` returns a scalar; `vectors` has one tensor per
# parameter (its shape); return a tuple with one tensor per parameter, the matching block of `Hv`.
#
# - Compute `g` with `torch.autograd.grad(..., create_graph=True)` so that it can be differentiated
#   again, then differentiate the sum over all parameters of `(g_i * v_i).sum()`.
# - Use `autograd.grad` both times and leave `.grad` alone (`backward(create_graph=True)` would write into
#   `.grad` and warns about a reference cycle). Return plain tensors, without `grad_fn`.
# - Where `f` is linear in the parameters, the gradient does not depend on them, and differentiating it
#   raises (it has no `grad_fn`): the Hessian is zero there. Return zeros, also for a parameter `f` does
#   not use at all.

# %% nbgrader="solution" id="hvp"
def hvp(f, params, vectors):
    """(H v) of the scalar f(*params), one tensor per parameter, computed by double backward."""
    ### BEGIN SOLUTION
    grads = torch.autograd.grad(f(*params), params, create_graph=True, allow_unused=True)
    terms = [(g * v).sum() for g, v in zip(grads, vectors) if g is not None and g.requires_grad]
    if not terms:
        return tuple(torch.zeros_like(p) for p in params)
    products = torch.autograd.grad(sum(terms), params, allow_unused=True)
    return tuple(torch.zeros_like(p) if h is None else h for h, p in zip(products, params))
    ### END SOLUTION

# %% nbgrader="tests" id="hvp-tests" points=3
# Exercise 03.hvp: the visible tests (no output: they pass; grading adds hidden tests)
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = torch.tensor(3.0, requires_grad=True)
f = lambda x, y: (x ** 3).sum() * y  # H = [[6 x y, 0, 3 x^2], ...]: (Hv)_x = 6 x y v_x + 3 x^2 v_y
hx, hy = attempt("hvp(f, [x, y], [v_x, v_y])", hvp, f, [x, y], [torch.tensor([1.0, -1.0]), torch.tensor(2.0)])
assert close(hx, [6 * 1 * 3 * 1 + 3 * 1 * 2, 6 * 2 * 3 * -1 + 3 * 4 * 2]), f"(Hv) for x: got {hx}"
assert close(hy, 3 * 1 * 1 + 3 * 4 * -1), f"(Hv) for y: got {hy}"
assert hx.grad_fn is None and hy.grad_fn is None, "return plain tensors (the last autograd.grad without create_graph)"
assert x.grad is None and y.grad is None, "leave .grad alone: use torch.autograd.grad"
linear = attempt("hvp of (x * 2).sum() + y (linear: its Hessian is 0)", hvp, lambda x, y: (x * 2).sum() + y,
                 [x, y], [torch.ones(2), torch.tensor(1.0)])
assert close(linear[0], [0.0, 0.0]) and close(linear[1], 0.0), "f linear in x and y: H = 0"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a03_graph_lifetime.py, hvp
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="count_alive_graphs-text"
# ## Exercise 4: does a training loop keep old graphs alive? (2 points)
#
# Write `count_alive_graphs(step, steps)`: call `step()` `steps` times; each call runs one training step and
# returns its loss (already backpropagated, maybe with `retain_graph=True`). Return how many of those `steps`
# graphs are still alive at the end: how many of the losses' `grad_fn` nodes still exist. A healthy loop
# gives 0; `total = total + loss` gives `steps`.
#
# - Watch each node with `weakref.ref(loss.grad_fn)`: a weak reference does not keep its object alive, and
#   calling it returns `None` once the object is gone.
# - Don't keep the losses yourself (a list of losses would keep every graph alive), and remember that the
#   loss tensor is not its graph: `total = total + loss` lets each loss tensor go but keeps its node.
# - A graph caught in a reference cycle (a hook that refers to its own tensor, for example) is garbage, not
#   a leak: Python frees it at its next cycle collection. Call `gc.collect()` before counting.

# %% nbgrader="solution" id="count_alive_graphs"
def count_alive_graphs(step, steps):
    """How many of the graphs of `steps` calls of step() are still alive afterwards."""
    ### BEGIN SOLUTION
    nodes = []
    for _ in range(steps):
        nodes.append(weakref.ref(step().grad_fn))
    gc.collect()
    return sum(node() is not None for node in nodes)
    ### END SOLUTION

# %% nbgrader="tests" id="count_alive_graphs-tests" points=2
# Exercise 03.count_alive_graphs: the visible tests (no output: they pass; grading adds hidden tests)
torch.manual_seed(0)
model = nn.Linear(3, 1)
inputs = torch.randn(4, 3)


def healthy_step():
    loss = model(inputs).pow(2).mean()
    loss.backward(retain_graph=True)
    return loss


total = 0.0


def leaky_step():
    global total
    loss = model(inputs).pow(2).mean()
    loss.backward()
    total = total + loss  # a tensor: its graph points to this loss's graph
    return loss


assert count_alive_graphs(healthy_step, 5) == 0, f"healthy loop: expected 0, got {count_alive_graphs(healthy_step, 5)}"
alive = count_alive_graphs(leaky_step, 5)
assert alive == 5, f"total = total + loss keeps every graph: expected 5, got {alive}"
del total


def cyclic_step():
    loss = model(inputs).pow(2).mean()
    loss.register_hook(lambda grad: loss.item() and None)  # the hook refers to loss: a reference cycle
    loss.backward()
    return loss


gc.disable()  # as between two automatic collections
try:
    alive = count_alive_graphs(cyclic_step, 5)
finally:
    gc.enable()
assert alive == 0, (f"graphs in a reference cycle (a hook that reads its own loss) are garbage, not leaks: "
                    f"expected 0, got {alive} (call gc.collect() before counting)")
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a03_graph_lifetime.py, count_alive_graphs
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="outro"
# ## Before you submit
#
# *Kernel > Restart Kernel and Run All Cells*, then **Validate**. "Success" means your notebook passes the
# visible tests, which catch the mistakes students make most often. Grading runs the same cells with **hidden
# tests** added to each tests cell: other shapes and dtypes, float64 finite-difference checks, deep graphs,
# bytes of saved tensors measured before and after, and eleven kinds of training loop. Code that is right, not
# just right on the visible examples, passes them.
