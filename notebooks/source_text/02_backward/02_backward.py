# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader="readonly" id="intro"
# # Assignment 02: backward and the chain rule
#
# Chapter 2 in five lines:
#
# - A node's backward is a **vector-Jacobian product**: it receives `grad_output` (dLoss/dOutput, shaped
#   like the output) and returns one gradient per input (dLoss/dInput, shaped like that input).
# - When an input was **broadcast** in forward, its gradient must be **summed** over the broadcast
#   dimensions: every copy of the input contributed to the loss.
# - The engine runs nodes in a **topological order**: a node runs only once every node that sends it a
#   gradient has run, so the gradients arriving along different paths are summed first. chibigrad
#   counts dependencies (Kahn's algorithm); a reversed depth-first post-order works as well.
# - The **path-sum rule**: dL/dx is the sum, over all paths from L down to x, of the product of the
#   local derivatives along the path. Backpropagation computes the same sum without listing the paths.
# - The engine never recurses, so graphs of any depth work. Neither may your code.
#
# Write your code where a cell says `raise NotImplementedError("Exercise ...")` (delete that line). The
# cell after each solution runs visible tests; grading adds hidden ones (other shapes, float64 gradient
# checks, random graphs, a 25,000-node graph, freed graphs).

# %% nbgrader="readonly" id="setup"
import functools
import linecache
import sys
import traceback

import numpy as np

import chibigrad as torch
from chibigrad.autograd import AccumulateGrad, Function
from chibigrad.autograd.engine import call_node, use_ordering

import chibigrad.tracebacks
from IPython import get_ipython

chibigrad.tracebacks.install()  # errors read as in PyTorch: your frames and the message, not chibigrad's


def close(a, b, tol=1e-5):
    """True when tensors (or arrays, numbers) a and b have the same shape and values."""
    a, b = [np.asarray(v.detach() if isinstance(v, torch.Tensor) else v, dtype=np.float64) for v in (a, b)]
    return a.shape == b.shape and np.allclose(a, b, rtol=tol, atol=tol)


def attempt(what, fn, *args):
    """fn(*args); an error becomes one sentence: the case (`what`), what came back, and the line that raised it."""
    try:
        return fn(*args)
    except RecursionError:
        message = (f"{what}: RecursionError. Graphs built by loops are deeper than Python's recursion "
                   "limit; use an explicit stack (a list you append to and pop from).")
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


@functools.lru_cache(maxsize=None)
def chain(n=10_000):
    """x and y = x + 1 + 1 + ... (n additions): a graph n + 1 nodes deep, far past the recursion limit.
    Built once (a second or so) and shared by the tests, which only read it."""
    x = torch.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(n):
        y = y + 1.0
    return x, y

# %% [markdown] nbgrader="readonly" id="sum_to-text"
# ## Exercise 1: sum a gradient back to an input's shape (2 points)
#
# Write `sum_to(grad, shape)`. `grad` has the shape of a broadcast result; `shape` is the shape of an
# input that was broadcast to it. Sum over the leading dimensions broadcasting added, and over every
# dimension where `shape` has size 1 but `grad` does not (keep those as size 1). Examples:
# `(2, 3) -> (3,)` sums dimension 0; `(2, 3) -> (2, 1)` sums dimension 1; `(4, 2, 3) -> (2, 1)` sums
# dimensions 0 and 2; `(2, 3) -> ()` sums everything.
#
# Use Tensor operations (`grad.sum(dims, keepdim=True)` with a tuple of dims, `.reshape(shape)`) so the
# result stays differentiable. `Tensor.sum_to_size` does exactly this: here you write it, so don't call it.
# **The grader reads your code:** if `sum_to` or anything it uses names `sum_to_size` or copies a function
# (`__code__`, `FunctionType`), this exercise scores 0 (`Hypot` and `Lerp` below may use `sum_to_size`).
# Code the grader cannot read (`exec`, `eval`, `getattr` with a computed name, `globals()`, `get_ipython()`, a
# magic such as `%run`, a module of your own) outside the other exercises' answers scores it 0 too.

# %% nbgrader="solution" id="sum_to"
def sum_to(grad, shape):
    """grad summed over the dimensions that broadcasting added or stretched, to `shape`."""
    ### BEGIN SOLUTION
    shape = tuple(shape)
    lead = grad.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1)
    if dims:
        grad = grad.sum(dims, keepdim=True)
    return grad.reshape(shape)
    ### END SOLUTION

# %% nbgrader="tests" id="sum_to-tests" points=2
# Exercise 02.sum_to: the visible tests (no output: they pass; grading adds hidden tests)
g = torch.tensor([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]])
for shape, expected in [((3,), [11.0, 22.0, 33.0]), ((2, 1), [[6.0], [60.0]]), ((1, 3), [[11.0, 22.0, 33.0]]),
                        ((), 66.0), ((2, 3), g)]:
    got = attempt(f"sum_to(grad of shape (2, 3), {shape})", sum_to, g, shape)
    assert close(got, expected), f"sum_to(grad of shape (2, 3), {shape}): expected {expected}, got {got}"
g3 = torch.arange(24.0).reshape(4, 2, 3)
got = attempt("sum_to(grad of shape (4, 2, 3), (2, 1))", sum_to, g3, (2, 1))
assert close(got, [[120.0], [156.0]]), \
    f"(4, 2, 3) -> (2, 1): sum dims 0 and 2 (the size-1 dim of (2, 1) is dim 2 of grad), expected " \
    f"[[120.], [156.]], got {got}"
gg = torch.ones(2, 3, requires_grad=True)
got = attempt("sum_to(a grad that requires grad, (3,))", sum_to, gg * 2, (3,))
assert got.grad_fn is not None, \
    "sum_to on a tensor that requires grad returned a tensor without grad_fn: use Tensor operations, not numpy"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a02_backward.py, sum_to
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="hypot-text"
# ## Exercise 2: `hypot` as an autograd Function (3 points)
#
# `hypot(a, b) = sqrt(a**2 + b**2)` element-wise, with `a` and `b` broadcast together. Its local
# derivatives are `a / hypot(a, b)` and `b / hypot(a, b)`. Write `Hypot`, an `autograd.Function`:
#
# - `forward(ctx, a, b)` computes the result (Tensor operations are fine: forward is not recorded) and
#   keeps what backward needs with `ctx.save_for_backward(...)`;
# - `backward(ctx, grad)` reads them back from `ctx.saved_tensors` and returns two gradients, **each
#   shaped like its input**: sum over broadcast dimensions (you may use `Tensor.sum_to_size(shape)` here).
#
# chibigrad's engine would forgive a gradient left in the broadcast shape (it sums it for you, as
# PyTorch's does); the tests look at what your backward returns, so don't rely on that.

# %% nbgrader="solution" id="hypot"
class Hypot(Function):
    @staticmethod
    def forward(ctx, a, b):
        ### BEGIN SOLUTION
        out = (a * a + b * b).sqrt()
        ctx.save_for_backward(a, b, out)
        return out
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad):
        ### BEGIN SOLUTION
        a, b, out = ctx.saved_tensors
        return (grad * a / out).sum_to_size(a.shape), (grad * b / out).sum_to_size(b.shape)
        ### END SOLUTION

# %% nbgrader="tests" id="hypot-tests" points=3
# Exercise 02.hypot: the visible tests (no output: they pass; grading adds hidden tests)
a = torch.tensor([3.0, 6.0], requires_grad=True)
b = torch.tensor([[4.0], [8.0]], requires_grad=True)
out = attempt("Hypot.apply(a, b) with a of shape (2,) and b of shape (2, 1)", Hypot.apply, a, b)  # broadcast to (2, 2)
assert close(out, [[5.0, 7.2111025], [8.5440037, 10.0]]), f"forward: got {out}"
assert out.grad_fn.name() == "HypotBackward", f"the result's grad_fn should be HypotBackward, got {out.grad_fn}"
grads = attempt("your backward, called with grad_output = ones(2, 2)", out.grad_fn.apply, torch.ones(2, 2))
assert len(grads) == 2, f"backward must return 2 gradients (one per input), got {len(grads)}"
assert grads[0].shape == (2,) and grads[1].shape == (2, 1), \
    f"gradients must have the inputs' shapes (2,) and (2, 1), got {grads[0].shape} and {grads[1].shape}"
twice = out.grad_fn.apply(torch.full((2, 2), 2.0))
assert close(twice[0], 2 * grads[0]) and close(twice[1], 2 * grads[1]), \
    f"with grad_output all 2.0 the gradients should double: got {twice[0]} and {twice[1]} (multiply by grad)"
out.sum().backward()
assert close(a.grad, [3 / 5 + 3 / 8.5440037, 6 / 7.2111025 + 6 / 10]), f"a.grad: got {a.grad}"
assert close(b.grad, [[4 / 5 + 4 / 7.2111025], [8 / 8.5440037 + 8 / 10]]), f"b.grad: got {b.grad}"
try:
    out.sum().backward()  # the graph of out was freed by the first backward
except RuntimeError:
    pass
else:
    raise AssertionError("a second backward through Hypot worked, expected the engine's RuntimeError: keep what "
                         "backward needs with ctx.save_for_backward (the engine frees it), not as ctx attributes")
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a02_backward.py, hypot
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="lerp-text"
# ## Exercise 3: `lerp`, with a weight that may be a number (3 points)
#
# `lerp(start, end, weight) = start + weight * (end - start)`, all three broadcast together. `weight`
# is a Tensor or a Python float. Write `Lerp`, an `autograd.Function` with
# `forward(ctx, start, end, weight)`. Its backward returns three gradients, each shaped like its
# input: for `start` `grad * (1 - weight)`, for `end` `grad * weight`, for `weight` `grad * (end - start)`,
# and `None` for a `weight` that is a Python number (the engine rejects a gradient for a non-tensor).
# `ctx.save_for_backward` takes tensors (or `None`); keep a number as an attribute of `ctx`.

# %% nbgrader="solution" id="lerp"
class Lerp(Function):
    @staticmethod
    def forward(ctx, start, end, weight):
        ### BEGIN SOLUTION
        is_tensor = isinstance(weight, torch.Tensor)
        ctx.save_for_backward(start, end, weight if is_tensor else None)
        ctx.number = None if is_tensor else weight
        return start + weight * (end - start)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad):
        ### BEGIN SOLUTION
        start, end, weight = ctx.saved_tensors
        if weight is None:
            w = ctx.number
            return (grad * (1 - w)).sum_to_size(start.shape), (grad * w).sum_to_size(end.shape), None
        return ((grad * (1 - weight)).sum_to_size(start.shape), (grad * weight).sum_to_size(end.shape),
                (grad * (end - start)).sum_to_size(weight.shape))
        ### END SOLUTION

# %% nbgrader="tests" id="lerp-tests" points=3
# Exercise 02.lerp: the visible tests (no output: they pass; grading adds hidden tests)
start = torch.tensor([0.0, 10.0], requires_grad=True)
end = torch.tensor([[4.0], [20.0]], requires_grad=True)
weight = torch.tensor(0.25, requires_grad=True)
out = Lerp.apply(start, end, weight)
assert close(out, [[1.0, 8.5], [5.0, 12.5]]), f"forward: got {out}"
grads = out.grad_fn.apply(torch.ones(2, 2))
assert len(grads) == 3, f"backward must return 3 gradients, got {len(grads)}"
assert [tuple(g.shape) for g in grads] == [(2,), (2, 1), ()], \
    f"gradients must have the inputs' shapes (2,), (2, 1), (), got {[tuple(g.shape) for g in grads]}"
out.sum().backward()
assert close(start.grad, [1.5, 1.5]) and close(end.grad, [[0.5], [0.5]]), f"got {start.grad}, {end.grad}"
assert close(weight.grad, (4 - 0) + (4 - 10) + (20 - 0) + (20 - 10)), f"weight.grad: got {weight.grad}"
start2 = torch.tensor([1.0, 2.0], requires_grad=True)
attempt("Lerp with weight 0.5 (a number), then backward",
        lambda: Lerp.apply(start2, torch.tensor([3.0, 6.0]), 0.5).sum().backward())
assert close(start2.grad, [0.5, 0.5]), f"with weight 0.5: got {start2.grad}"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a02_backward.py, lerp
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="dfs_order-text"
# ## Exercise 4: a depth-first ordering for the engine (4 points)
#
# The engine asks an *ordering* for the list of nodes to run: `ordering(roots) -> [nodes]`, where
# `roots` is a list of nodes (the outputs' `grad_fn`s; the same node may appear twice). Every reachable
# node must appear once, before every node it sends a gradient to. `use_ordering(f)` makes every
# `backward()` in its `with` block use `f`.
#
# Write `dfs_order(roots)` by depth-first search: a node is *finished* once all its children
# (`next_functions`, skipping `None`) are finished; the finishing order lists every node after its
# children, so **reversed** it is an order the engine can use. No recursion (a 25,000-node chain must
# work): keep a stack of `(node, iterator over its children)`. Don't call the engine's own
# `topological_order`: that is the dependency-counting way, and here you write the other one.
# **The grader reads your code:** if `dfs_order` or anything it uses names `topological_order` or copies a
# function (`__code__`, `FunctionType`), or the notebook raises the recursion limit
# (`sys.setrecursionlimit`, `threading.stack_size`), this exercise scores 0.
# Code the grader cannot read (`exec`, `eval`, `getattr` with a computed name, `globals()`, `get_ipython()`, a
# magic such as `%run`, a module of your own) outside the other exercises' answers scores it 0 too.

# %% nbgrader="solution" id="dfs_order"
def dfs_order(roots):
    """Every node reachable from roots, each once, each before the nodes it feeds (reversed DFS post-order)."""
    ### BEGIN SOLUTION
    seen, finished = set(), []
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, children = stack[-1]
            for child, _ in children:
                if child is not None and child not in seen:
                    seen.add(child)
                    stack.append((child, iter(child.next_functions)))
                    break
            else:
                stack.pop()
                finished.append(node)
    finished.reverse()
    return finished
    ### END SOLUTION

# %% nbgrader="tests" id="dfs_order-tests" points=4
# Exercise 02.dfs_order: the visible tests (no output: they pass; grading adds hidden tests)
x = torch.tensor(0.5, requires_grad=True)
a = x.sin()
y = a * a.cos() + a  # the node of a is reached along two paths
order = dfs_order([y.grad_fn])
assert isinstance(order, list) and order[0] is y.grad_fn, "the root comes first"
assert len(order) == len(set(order)) == 5, f"5 distinct nodes, each once: got {[n.name() for n in order]}"
position = {node: i for i, node in enumerate(order)}
for node in order:
    for child, _ in node.next_functions:
        assert child is None or position[child] > position[node], \
            f"{child.name()} comes before {node.name()}, which sends it a gradient"
(expected,) = torch.autograd.grad(y, x, retain_graph=True)
with use_ordering(dfs_order):
    y.backward()
assert close(x.grad, expected), f"backward with dfs_order gives x.grad = {x.grad}, expected {expected}"
y1, y2 = x * 2, x.exp()  # two roots, two graphs that share only x
order = attempt("dfs_order([y1.grad_fn, y2.grad_fn])", dfs_order, [y1.grad_fn, y2.grad_fn])
assert {n.name() for n in order} == {"MulBackward0", "ExpBackward0", "AccumulateGrad"} and len(order) == 3, \
    f"two roots: expected the nodes of both graphs (MulBackward0, ExpBackward0, x's AccumulateGrad), got " \
    f"{[n.name() for n in order]}"
deep_x, deep_y = chain()
order = attempt("dfs_order on a chain of 10,000 additions", dfs_order, [deep_y.grad_fn])
assert len(order) == 10_001 and order[0] is deep_y.grad_fn, \
    f"a chain of 10,000 additions: expected its 10,001 nodes, the root first, got {len(order)} nodes"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a02_backward.py, dfs_order
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="path_sum_grad-text"
# ## Exercise 5: the path-sum rule (3 points)
#
# The seeds' toy network has five "neurons" (here each holds a 3x3 tensor and every operation is
# element-wise): `b = w1 * a`, `c = w2 * a`, `d = w3 * b + w4 * c`, `L = 10 - d`. By the path-sum
# rule, dL/da = (-1)(1)(w3)(w1) + (-1)(1)(w4)(w2): two paths lead from L to a.
#
# Write `path_sum_grad(output, leaf)` that applies the rule to any graph of element-wise operations in
# which every tensor has the same shape: the sum, over every path from `output.grad_fn` to the leaf's
# `AccumulateGrad` node, of the product of the local derivatives along the path (element-wise).
#
# - The local derivatives of a node: `call_node(node, [ones])` with `ones = torch.ones_like(output)`
#   returns one tensor (or `None`) per entry of `node.next_functions`.
# - A path ends at an `AccumulateGrad` node; it counts if that node's `.variable` is `leaf`. Two edges
#   from one node to the same child are two paths (`x * x`).
# - Do not keep a set of visited nodes: a shared node lies on several paths, and each path counts.
#   (The number of paths can grow exponentially; that is why the engine sums at shared nodes instead.)
# - Work under `torch.no_grad()`, return `torch.zeros_like(leaf)` when no path reaches the leaf, don't
#   call `backward` or `autograd.grad`, and don't recurse. **The grader reads your code:** if the notebook
#   raises the recursion limit (`sys.setrecursionlimit`, `threading.stack_size`), this exercise scores 0.
#   Code the grader cannot read (`exec`, `eval`, `getattr` with a computed name, `globals()`, `get_ipython()`,
#   a magic such as `%run`, a module of your own) outside the other exercises' answers scores it 0 too.

# %% nbgrader="solution" id="path_sum_grad"
def path_sum_grad(output, leaf):
    """dOutput/dLeaf (element-wise) as the sum over paths of the products of local derivatives."""
    ### BEGIN SOLUTION
    total = torch.zeros_like(leaf)
    if output.grad_fn is None:
        return total
    with torch.no_grad():
        ones, local = torch.ones_like(output), {}
        stack = [(output.grad_fn, ones)]
        while stack:
            node, product = stack.pop()
            if node not in local:
                local[node] = call_node(node, [ones])
            for (child, _), derivative in zip(node.next_functions, local[node]):
                if child is None or derivative is None:
                    continue
                if isinstance(child, AccumulateGrad):
                    if child.variable is leaf:
                        total = total + product * derivative
                else:
                    stack.append((child, product * derivative))
    return total
    ### END SOLUTION

# %% nbgrader="tests" id="path_sum_grad-tests" points=3
# Exercise 02.path_sum_grad: the visible tests (no output: they pass; grading adds hidden tests)
torch.manual_seed(0)
a, w1, w2, w3, w4 = [torch.randn(3, 3, requires_grad=True) for _ in range(5)]
b = w1 * a
c = w2 * a
d = w3 * b + w4 * c
L = 10 - d
assert close(path_sum_grad(L, a), -(w3 * w1 + w4 * w2), 1e-5), "dL/da: two paths, through b and through c"
assert close(path_sum_grad(L, w4), -c, 1e-5), "dL/dw4: one path, through d"
assert close(path_sum_grad(L, torch.ones(3, 3, requires_grad=True)), torch.zeros(3, 3)), \
    "a leaf L does not depend on: zeros"
x = torch.tensor(3.0, requires_grad=True)
assert close(path_sum_grad(x * x, x), 6.0), "x * x: two edges to x, two paths, 3 + 3"
assert a.grad is None, "don't call backward: the point is to do it by hand"
p, q = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)  # two leaves, equal values
got = attempt("path_sum_grad(p * 3 + q, p)", path_sum_grad, p * 3 + q, p)
assert close(got, [3.0, 3.0]), \
    f"p * 3 + q with p and q both ones: dOut/dp is 3, got {got} (recognise the leaf with `is`)"
deep_x, deep_y = chain()
got = attempt("path_sum_grad on a chain of 10,000 additions", path_sum_grad, deep_y, deep_x)
assert close(got, 1.0), f"a chain of additions has one path of derivatives 1: expected 1.0, got {got}"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a02_backward.py, path_sum_grad
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="outro"
# ## Before you submit
#
# *Kernel > Restart Kernel and Run All Cells*, then **Validate**. "Success" means your notebook passes the
# visible tests, which catch the mistakes students make most often. Grading runs the same cells with **hidden
# tests** added to each tests cell: other shapes and broadcasts, float64 gradient checks, random graphs, a
# 25,000-node chain, several roots and freed graphs. Code that is right, not just right on the visible examples,
# passes them.
