# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader="readonly" id="intro"
# # Assignment 01b: an engine from scratch
#
# Chapter 1b built a reverse-mode engine for scalars in about seventy lines. Here you build one for
# arrays, piece by piece, and it is graded against chibigrad's engine on random graphs. A recap:
#
# - A **node** is a backward function. `node.edges[i]` is the node that the gradient for input `i` goes to
#   (`None` when that input needs no gradient), `node.saved` holds what its formula needs, and
#   `node.apply(grad)` returns one gradient per input. A **leaf** that requires grad has a `Leaf` node
#   (PyTorch's `AccumulateGrad`) that stores the gradient in `leaf.tensor.grad`.
# - A node must run **once**, after every node that sends it a gradient, on the **sum** of what they sent:
#   count the edges that point at each node, and run a node when its count drops to zero.
# - A node's formula returns gradients in the shape of its **output**. An input that was **broadcast**
#   (a `(3,)` bias added to a `(2, 3)` batch) must get its gradient **summed back** to its own shape.
# - After a node has run, nothing reads its saved values again: the engine **frees** them, and a second
#   backward through the node fails (unless `retain_graph=True`).
# - Graphs built by loops are deeper than Python's recursion limit (1,000 calls): no recursion.
#
# The setup cell defines the small engine's data structures (`Tensor`, `Node`, `Leaf`; read it). Write your
# code where a cell says `raise NotImplementedError("Exercise ...")` (delete that line). The cell after each
# solution runs visible tests: no output means they pass. Grading adds hidden tests (random graphs with shared
# subexpressions, constants and broadcasting, a 25,000-node chain). Each exercise is graded on its own: the
# last one may reuse code of the others, copied into its cell, but must not call them.

# %% nbgrader="readonly" id="setup"
import linecache
import sys
import traceback

import numpy as np

import chibigrad as torch

import chibigrad.tracebacks
from IPython import get_ipython

chibigrad.tracebacks.install()  # errors read as in PyTorch: your frames and the message, not chibigrad's

# ---- the small engine's data structures (the grader builds its graphs with this same code) ----
FREED = "Trying to backward through the graph a second time: this node's saved values were freed"


class Node:
    """One backward function. ``formula(grad, *saved)`` returns one gradient per input, each in the shape of
    the node's output (summing a broadcast input's gradient back is the engine's job); ``edges[i]`` is the node
    input i's gradient goes to (None if input i needs no gradient); ``input_shapes[i]`` is input i's shape."""

    def __init__(self, name, formula, edges, saved, input_shapes):
        self.name, self.formula, self.edges = name, formula, edges
        self.saved, self.input_shapes = saved, input_shapes

    def apply(self, grad):
        """The gradients for the inputs, from the gradient of the output."""
        if self.saved is None:
            raise RuntimeError(FREED)
        return self.formula(grad, *self.saved)

    def __repr__(self):
        return f"<{self.name}>"  # as the chapter prints nodes


class Leaf(Node):
    """The node of a leaf tensor that requires grad (PyTorch's AccumulateGrad): no formula, no edges."""

    def __init__(self, tensor):
        super().__init__("AccumulateGrad", None, [], [], [])
        self.tensor = tensor


class Tensor:
    """A float64 array, its ``.grad``, and ``.node``: the node that made it (a Leaf for a leaf that requires grad,
    None for a constant)."""

    def __init__(self, data, requires_grad=False):
        self.data = np.array(data, dtype=np.float64)
        self.grad = None
        self.node = Leaf(self) if requires_grad else None

    @property
    def shape(self):
        return self.data.shape

    def __repr__(self):
        return f"Tensor({self.data}, node={self.node})"

    def __add__(self, other):
        other = lift(other)
        return make("AddBackward0", self.data + other.data, [self, other], lambda g: (g, g))

    def __sub__(self, other):
        other = lift(other)
        return make("SubBackward0", self.data - other.data, [self, other], lambda g: (g, -g))

    def __mul__(self, other):
        other = lift(other)
        return make("MulBackward0", self.data * other.data, [self, other], lambda g, a, b: (g * b, g * a),
                    [self.data, other.data])

    __radd__, __rmul__ = __add__, __mul__

    def __truediv__(self, other):  # its formula is exercise 3's div_backward
        other = lift(other)
        return make("DivBackward0", self.data / other.data, [self, other],
                    lambda g, a, b: div_backward(g, a, b), [self.data, other.data])

    def __matmul__(self, other):  # 2-D only; exercise 3's matmul_backward
        return make("MmBackward0", self.data @ other.data, [self, other],
                    lambda g, a, b: matmul_backward(g, a, b), [self.data, other.data])

    def exp(self):  # saves its output; exercise 3's exp_backward
        result = np.exp(self.data)
        return make("ExpBackward0", result, [self], lambda g, out: exp_backward(g, out), [result])

    def tanh(self):
        result = np.tanh(self.data)
        return make("TanhBackward0", result, [self], lambda g, t: (g * (1 - t * t),), [result])

    def sum(self):
        shape = self.shape
        return make("SumBackward0", self.data.sum(), [self], lambda g: (np.full(shape, g),))


def lift(value):
    """A Python number as a constant Tensor (no gradient)."""
    return value if isinstance(value, Tensor) else Tensor(value)


def make(name, value, inputs, formula, saved=()):
    """The result of an operation, with a Node when any input needs a gradient."""
    result = Tensor(value)
    edges = [t.node for t in inputs]
    if any(edge is not None for edge in edges):
        result.node = Node(name, formula, edges, list(saved), [t.shape for t in inputs])
    return result
# ---- end of the small engine's data structures ----


def close(a, b, tol=1e-6):
    """True when a and b (arrays, numbers, Tensors) have the same shape and values."""
    a, b = [np.asarray(v.detach() if isinstance(v, torch.Tensor) else v, dtype=np.float64) for v in (a, b)]
    return a.shape == b.shape and np.allclose(a, b, rtol=tol, atol=tol)


def attempt(what, fn, *args, **kwargs):
    """fn(*args); an error becomes one sentence: the case (`what`), what came back, and the line that raised it."""
    try:
        return fn(*args, **kwargs)
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


def chain(n=10_000):
    """x and y = x * 1.0001 * 1.0001 ... (n products): a graph n + 1 nodes deep, far past the recursion limit."""
    x = Tensor(1.0, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0001
    return x, y


def check_order(order, root, expected_count):
    """An AssertionError unless ``order`` lists expected_count distinct nodes, root first, each before the nodes
    it sends a gradient to."""
    assert isinstance(order, list), f"expected a list of nodes, got {type(order).__name__}"
    assert len(order) == len(set(order)), f"a node appears twice: {order}"
    assert len(order) == expected_count, f"expected {expected_count} nodes, got {len(order)}: {order}"
    assert order[0] is root, f"the root comes first, got {order[0]}"
    position = {node: i for i, node in enumerate(order)}
    for node in order:
        for child in node.edges:
            assert child is None or position.get(child, -1) > position[node], \
                f"{child} comes before {node}, which sends it a gradient (or is missing)"

# %% [markdown] nbgrader="readonly" id="backward_order-text"
# ## Exercise 1: the backward order, by counting dependencies (3 points)
#
# Write `backward_order(root)`: every node reachable from the node `root` along `edges` (skip `None`), each
# **once**, each **before** every node it sends a gradient to. Do it in two passes, as the engine does:
#
# 1. walk the graph once with an explicit stack and a set of nodes already seen, counting for every node
#    the edges that point at it (two edges from one node to the same child, as in `x * x`, count twice);
# 2. start a list of ready nodes with `root`; take a ready node, append it to the order, and subtract one
#    from the count of each of its children; a child whose count reaches zero is ready.
#
# No recursion: a 10,000-node chain must work. **The grader reads your code:** if the notebook raises the
# recursion limit (`sys.setrecursionlimit`, `threading.stack_size`), this exercise scores 0.
# Code the grader cannot read (`exec`, `eval`, `getattr` with a computed name, `globals()`, `get_ipython()`, a
# magic such as `%run`, a module of your own) outside the other exercises' answers scores it 0 too.

# %% nbgrader="solution" id="backward_order"
def backward_order(root):
    """The nodes reachable from root, each once, each before the nodes it feeds (dependency counting)."""
    ### BEGIN SOLUTION
    pending, todo, found = {}, [root], {root}
    while todo:
        node = todo.pop()
        for child in node.edges:
            if child is None:
                continue
            pending[child] = pending.get(child, 0) + 1
            if child not in found:
                found.add(child)
                todo.append(child)
    order, ready = [], [root]
    while ready:
        node = ready.pop()
        order.append(node)
        for child in node.edges:
            if child is not None:
                pending[child] -= 1
                if not pending[child]:
                    ready.append(child)
    return order
    ### END SOLUTION

# %% nbgrader="tests" id="backward_order-tests" points=3
# Exercise 01b.backward_order: the visible tests (no output: they pass; grading adds hidden tests)
x = Tensor(0.5, requires_grad=True)
a = x.tanh()
y = a * a + a  # the node of a is reached along three edges
order = attempt("backward_order on y = a * a + a with a = x.tanh()", backward_order, y.node)
check_order(order, y.node, 4)
assert order[2] is a.node, f"tanh's node must come after both nodes that feed it, got {order}"
b = a.tanh() + a * a  # a's node: one edge from the outer tanh, two from the product
order = attempt("backward_order on a.tanh() + a * a", backward_order, b.node)
check_order(order, b.node, 5)
sq = x * x
order = attempt("backward_order on x * x", backward_order, sq.node)
assert len(order) == 2 and order[-1] is x.node, \
    f"x * x: expected [MulBackward0, x's AccumulateGrad] (count both edges into x's node), got {order}"
w = Tensor([1.0, 2.0], requires_grad=True)
z = (w * 3.0 + x).sum()  # 3.0 is a constant: its edge is None
order = attempt("backward_order on (w * 3.0 + x).sum()", backward_order, z.node)
check_order(order, z.node, 5)
order = attempt("backward_order on a leaf's own node", backward_order, x.node)
assert order == [x.node], f"a leaf's node alone: expected [x.node], got {order}"
deep_x, deep_y = chain()
order = attempt("backward_order on a chain of 10,000 products", backward_order, deep_y.node)
assert len(order) == 10_001 and order[0] is deep_y.node and order[-1] is deep_x.node, \
    f"a chain of 10,000 products: expected its 10,001 nodes from the top down, got {len(order)} nodes"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a01b_engine.py, backward_order
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="accumulate-text"
# ## Exercise 2: a gradient buffer, with broadcasting (2 points)
#
# Write `accumulate(buffers, node, grad, shape)`. `buffers` is a dict from node to the sum of the gradients
# it has received so far; `grad` is a numpy array in the shape of the output of the node that sent it, and
# `shape` the shape of the input it belongs to. Sum `grad` back to `shape` (over the leading dimensions that
# broadcasting added, and over every dimension where `shape` has size 1 and `grad` does not, keeping it as
# size 1), then add it into `buffers[node]`, or store it there if `node` has no buffer yet. Return nothing.
#
# Arrays are shared: `AddBackward0` hands the **same** array to both its inputs. Never change `grad` or an
# array already in `buffers` in place (no `+=`); make new arrays (`a + b`, `a.sum(...)`).
#
# Examples: `(2, 3) -> (3,)` sums dimension 0; `(2, 3) -> (2, 1)` sums dimension 1, keeping it;
# `(4, 2, 3) -> (2, 1)` sums dimensions 0 and 2; `(2, 3) -> ()` sums everything.

# %% nbgrader="solution" id="accumulate"
def accumulate(buffers, node, grad, shape):
    """Add grad, summed back to shape, into buffers[node]."""
    ### BEGIN SOLUTION
    grad = np.asarray(grad)
    added = grad.ndim - len(shape)
    stretched = [added + i for i, size in enumerate(shape) if size == 1 and grad.shape[added + i] != 1]
    total = grad.sum(axis=tuple(range(added)) + tuple(stretched), keepdims=True).reshape(shape)
    buffers[node] = buffers[node] + total if node in buffers else total
    ### END SOLUTION

# %% nbgrader="tests" id="accumulate-tests" points=2
# Exercise 01b.accumulate: the visible tests (no output: they pass; grading adds hidden tests)
n1, n2 = Leaf(Tensor(0.0)), Leaf(Tensor(0.0))
g = np.array([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]])
for shape, expected in [((2, 3), g), ((3,), [11.0, 22.0, 33.0]), ((2, 1), [[6.0], [60.0]]),
                        ((1, 3), [[11.0, 22.0, 33.0]]), ((), 66.0)]:
    buffers = {}
    attempt(f"accumulate(buffers, node, grad of shape (2, 3), {shape})", accumulate, buffers, n1, g, shape)
    assert n1 in buffers and close(buffers[n1], expected), \
        f"grad of shape (2, 3) summed to {shape}: expected {np.asarray(expected).tolist()}, got " \
        f"{buffers.get(n1)}"
g3 = np.arange(24.0).reshape(4, 2, 3)
buffers = {}
attempt("accumulate(buffers, node, grad of shape (4, 2, 3), (2, 1))", accumulate, buffers, n1, g3, (2, 1))
assert close(buffers[n1], [[120.0], [156.0]]), \
    f"(4, 2, 3) -> (2, 1): sum dimensions 0 and 2, expected [[120.], [156.]], got {buffers[n1]}"
shared = np.ones(3)
buffers = {}
for node in (n1, n2, n1):  # what AddBackward0 does: the same array to two inputs
    attempt("accumulate(buffers, node, ones(3), (3,))", accumulate, buffers, node, shared, (3,))
assert close(buffers[n1], [2.0, 2.0, 2.0]), \
    f"two contributions of ones(3) to one node must add up to [2, 2, 2], got {buffers[n1]}"
assert close(buffers[n2], [1.0, 1.0, 1.0]) and close(shared, [1.0, 1.0, 1.0]), \
    f"adding into one buffer changed another one or the incoming array (in place +=?): the other node's " \
    f"buffer is {buffers[n2]}, the incoming array is {shared}"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a01b_engine.py, accumulate
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="formulas-text"
# ## Exercise 3: three backward formulas (3 points)
#
# Each formula receives `grad`, the gradient of the loss with respect to the operation's output (an array
# shaped like the output), and the values the operation saved, and returns a **tuple** with one gradient per
# input, each in the **output's** shape (the engine sums broadcast gradients back; summing here too is fine).
#
# - `div_backward(grad, a, b)` for `a / b` (a and b broadcast together): the derivatives are `1 / b` and
#   `-a / b**2`.
# - `exp_backward(grad, out)` for `exp(x)`: the node saved its **output** `out = exp(x)` (not `x`), and the
#   derivative of `exp` is `exp` itself.
# - `matmul_backward(grad, a, b)` for the matrix product `a @ b` of 2-D arrays `(n, k) @ (k, m)`: the
#   gradients are `(n, k)` and `(k, m)` matrices. Find them from the shapes, or from one entry of the product.

# %% nbgrader="solution" id="formulas"
def div_backward(grad, a, b):
    """Gradients of a / b."""
    ### BEGIN SOLUTION
    return grad / b, -grad * a / (b * b)
    ### END SOLUTION


def exp_backward(grad, out):
    """Gradient of exp(x), from the saved output out = exp(x)."""
    ### BEGIN SOLUTION
    return (grad * out,)
    ### END SOLUTION


def matmul_backward(grad, a, b):
    """Gradients of a @ b (2-D)."""
    ### BEGIN SOLUTION
    return grad @ b.T, a.T @ grad
    ### END SOLUTION

# %% nbgrader="tests" id="formulas-tests" points=3
# Exercise 01b.formulas: the visible tests (no output: they pass; grading adds hidden tests)
def reference(fn, arrays, grad):
    """chibigrad's gradients of fn(*tensors) with grad_output `grad`, as arrays."""
    tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
    fn(*tensors).backward(torch.tensor(grad))
    return [t.grad.numpy() for t in tensors]

rng = np.random.default_rng(0)
a, b = rng.uniform(0.5, 2.0, (2, 3)), rng.uniform(0.5, 2.0, (2, 3))
g = rng.standard_normal((2, 3))
got = attempt("div_backward(grad, a, b) with a, b of shape (2, 3)", div_backward, g, a, b)
want = reference(lambda p, q: p / q, [a, b], g)
assert isinstance(got, tuple) and len(got) == 2, f"div_backward must return a tuple of 2 gradients, got {got!r}"
assert close(got[0], want[0]), f"div_backward: gradient for a should be grad / b = {want[0]}, got {got[0]}"
assert close(got[1], want[1]), f"div_backward: gradient for b should be -grad * a / b**2 = {want[1]}, got {got[1]}"
c = rng.uniform(0.5, 2.0, (3,))
got = attempt("div_backward(grad, a, c) with a of shape (2, 3), c of shape (3,)", div_backward, g, a, c)
want = reference(lambda p, q: p / q, [a, c], g)
assert close(np.asarray(got[1]).reshape(-1, 3).sum(0), want[1]), \
    f"div_backward with c broadcast over rows: the gradient for c, summed over rows, should be {want[1]}"
x = rng.standard_normal((2, 3))
got = attempt("exp_backward(grad, out)", exp_backward, g, np.exp(x))
want = reference(lambda p: p.exp(), [x], g)
assert isinstance(got, tuple) and len(got) == 1, f"exp_backward must return a tuple of 1 gradient, got {got!r}"
assert close(got[0], want[0]), f"exp_backward: expected grad * out = {want[0]}, got {got[0]} (out is exp(x) already)"
m1, m2, gm = rng.standard_normal((2, 4)), rng.standard_normal((4, 3)), rng.standard_normal((2, 3))
got = attempt("matmul_backward(grad, a, b) with a (2, 4), b (4, 3)", matmul_backward, gm, m1, m2)
want = reference(lambda p, q: p @ q, [m1, m2], gm)
assert isinstance(got, tuple) and len(got) == 2, f"matmul_backward must return a tuple of 2 gradients, got {got!r}"
assert np.shape(got[0]) == (2, 4) and np.shape(got[1]) == (4, 3), \
    f"matmul_backward for (2, 4) @ (4, 3): gradients of shapes (2, 4) and (4, 3), got {np.shape(got[0])} and " \
    f"{np.shape(got[1])}"
assert close(got[0], want[0]) and close(got[1], want[1]), \
    f"matmul_backward: expected {want[0]} and {want[1]}, got {got[0]} and {got[1]}"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a01b_engine.py, formulas
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="backward-text"
# ## Exercise 4: the engine (4 points)
#
# Write `backward(tensor, gradient=None, retain_graph=False)`, the whole backward pass from `tensor.node`:
#
# - it starts with `gradient` (an array shaped like `tensor`; ones when `None`) as the root's gradient;
# - every node reachable from the root runs **once** (`node.apply(grad)`), after every node that sends it a
#   gradient, on the **sum** of the gradients it received (count dependencies, as in exercise 1);
# - each gradient a node returns is **summed back** to `node.input_shapes[i]` (as in exercise 2) and goes
#   to `node.edges[i]` (skip `None` edges);
# - a `Leaf` adds its gradient into `leaf.tensor.grad` (set it when it is `None`); `.grad` must be the
#   tensor's own array (several leaves can receive the very same array), and gradients add up over calls;
# - after a node has run, set `node.saved = None` (it frees what the node saved), unless `retain_graph`;
#   `Node.apply` then raises if backward reaches the node again. A node that saved nothing (an empty list)
#   may keep its empty list.
#
# No recursion: a 10,000-node chain must work. **The grader reads your code:** if the notebook raises the
# recursion limit (`sys.setrecursionlimit`, `threading.stack_size`), this exercise scores 0.
# Code the grader cannot read (`exec`, `eval`, `getattr` with a computed name, `globals()`, `get_ipython()`, a
# magic such as `%run`, a module of your own) outside the other exercises' answers scores it 0 too. The
# operations used here are `+`, `-`, `*`, `tanh` and `sum` (their formulas are in the setup cell), so this
# exercise does not depend on exercise 3.

# %% nbgrader="solution" id="backward"
def backward(tensor, gradient=None, retain_graph=False):
    """Backpropagate from tensor into the .grad of every leaf that requires grad."""
    ### BEGIN SOLUTION
    root = tensor.node
    waiting, todo, found = {}, [root], {root}
    while todo:
        for child in todo.pop().edges:
            if child is not None:
                waiting[child] = waiting.get(child, 0) + 1
                if child not in found:
                    found.add(child)
                    todo.append(child)
    start = np.ones_like(tensor.data) if gradient is None else np.asarray(gradient, dtype=np.float64)
    received, ready = {root: start}, [root]
    while ready:
        node = ready.pop()
        total = received.pop(node)
        if isinstance(node, Leaf):
            leaf = node.tensor
            leaf.grad = total.copy() if leaf.grad is None else leaf.grad + total
            continue
        outputs = node.apply(total)
        if node.saved and not retain_graph:
            node.saved = None
        for child, g, shape in zip(node.edges, outputs, node.input_shapes):
            if child is None:
                continue
            g = np.asarray(g)
            while g.ndim > len(shape):
                g = g.sum(axis=0)
            for axis, size in enumerate(shape):
                if size == 1 and g.shape[axis] != 1:
                    g = g.sum(axis=axis, keepdims=True)
            received[child] = received[child] + g if child in received else g
            waiting[child] -= 1
            if waiting[child] == 0:
                ready.append(child)
    ### END SOLUTION

# %% nbgrader="tests" id="backward-tests" points=4
# Exercise 01b.backward: the visible tests (no output: they pass; grading adds hidden tests)
x, y = Tensor(2.0, requires_grad=True), Tensor(3.0, requires_grad=True)
out = (x * y + x) * (x * y + x)
attempt("backward((x * y + x) * (x * y + x)) at x = 2, y = 3", backward, out)
assert close(x.grad, 64.0) and close(y.grad, 32.0), \
    f"(xy + x)^2 at x = 2, y = 3: expected x.grad = 64, y.grad = 32 (chapter 1b), got {x.grad} and {y.grad}"
assert all(n.saved is None for n in (out.node, out.node.edges[0].edges[0])), \
    "after backward, a node that saved values must have node.saved = None (freed)"
try:
    backward(out)
except Exception as err:
    assert isinstance(err, RuntimeError) and str(err) == FREED, \
        f"a second backward raised {type(err).__name__}: {err}; expected Node.apply's RuntimeError ({FREED})"
else:
    raise AssertionError("a second backward through a freed graph worked: set node.saved = None after the node ran")

rng = np.random.default_rng(1)
arrays = {"W": rng.standard_normal((2, 3)), "b": rng.standard_normal(3), "c": rng.standard_normal((2, 1))}
mine = {k: Tensor(v, requires_grad=True) for k, v in arrays.items()}
ref = {k: torch.tensor(v, requires_grad=True) for k, v in arrays.items()}
for t in (mine, ref):  # broadcasting (b, c) and a shared subexpression (h, used three times)
    h = (t["W"] * t["b"] + t["c"]).tanh()
    t["out"] = (h * h - h * 0.5).sum()
attempt("backward on (h * h - h * 0.5).sum() with h = (W * b + c).tanh()", backward, mine["out"])
ref["out"].backward()
for k in "Wbc":
    assert mine[k].grad is not None and close(mine[k].grad, ref[k].grad), \
        f"h = (W * b + c).tanh() with W (2, 3), b (3,), c (2, 1): {k}.grad should be {ref[k].grad.numpy()} (shape " \
        f"{tuple(ref[k].shape)}), got {mine[k].grad}"

p, q = Tensor([1.0, 2.0], requires_grad=True), Tensor([3.0, 4.0], requires_grad=True)
s = p + q  # AddBackward0 hands one array to both leaves
attempt("backward(p + q, gradient=[1, 1], retain_graph=True), twice", backward, s, np.ones(2), True)
attempt("the second backward(p + q, ...)", backward, s, np.ones(2), True)
assert close(p.grad, [2.0, 2.0]) and close(q.grad, [2.0, 2.0]), \
    f"two backward passes through p + q: both grads should be [2, 2] (they add up, and each leaf's .grad is its " \
    f"own array), got {p.grad} and {q.grad}"
r = Tensor([1.0, 2.0], requires_grad=True)
attempt("backward(r * r, gradient=[1, 10])", backward, r * r, np.array([1.0, 10.0]))
assert close(r.grad, [2.0, 40.0]), f"r * r with gradient [1, 10] at r = [1, 2]: expected [2, 40], got {r.grad}"

deep_x, deep_y = chain()
attempt("backward on a chain of 10,000 products", backward, deep_y)
assert close(deep_x.grad, 1.0001 ** 10_000), \
    f"a chain of 10,000 products by 1.0001: expected x.grad = {1.0001 ** 10_000:.6f}, got {deep_x.grad}"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a01b_engine.py, backward
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="outro"
# ## Before you submit
#
# *Kernel > Restart Kernel and Run All Cells*, then **Validate**. "Success" means your notebook passes the
# visible tests, which catch the mistakes students make most often. Grading runs the same cells with **hidden
# tests** added to each tests cell: random graphs with shared subexpressions, constants and broadcasting,
# compared with chibigrad's engine; more shapes and formulas checked by finite differences; a 25,000-node chain;
# freed and retained graphs. Code that is right, not just right on the visible examples, passes them.
