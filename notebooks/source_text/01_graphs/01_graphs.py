# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader="readonly" id="intro"
# # Assignment 01: computation graphs
#
# Chapter 1 showed that chibigrad, like PyTorch, records a graph while your code runs. A quick recap:
#
# - Every result of an operation on a tensor that requires grad has a `grad_fn`: the **node** that will
#   compute this operation's backward. A leaf tensor (created by you) has `grad_fn = None`.
# - `node.next_functions` is a tuple with one pair `(next_node, input_nr)` per input of the operation:
#   the node the gradient for that input goes to. `next_node` is `None` for an input that needs no
#   gradient (a constant, a Python number).
# - A leaf that requires grad is represented in the graph by an `AccumulateGrad` node; its
#   `.variable` is the leaf tensor, and it is where backward adds the gradient into `.grad`.
# - `node.name()` is the node's class name: `MulBackward0`, `SinBackward0`, `AccumulateGrad`, ...
# - Nodes are shared: `y = a * a.cos() + a` reaches the node of `a` along two paths. A walk must visit
#   it once.
# - A graph built by a loop can be tens of thousands of nodes deep, far past Python's recursion limit
#   (1,000 calls). chibigrad's engine never recurses, and neither may your code: use an explicit
#   stack (a list you `append` to and `pop` from).
#
# In this assignment you walk and summarise graphs; in the last exercise your code runs inside the real
# engine while it differentiates.
#
# **How it works.** Write your code where a cell says `raise NotImplementedError("Exercise ...")`
# (delete that line). The cell after each solution runs visible tests: no output means they pass.
# Grading adds hidden tests (edge cases, random graphs, a 25,000-node graph), so make your code correct,
# not just correct on the visible cases. Do not call the engine's own graph walkers
# (`chibigrad.autograd.engine.topological_order`, `_count_dependencies`) in exercises 1-4.
# **The grader reads your code:** if one of those exercises' functions, or anything it uses, names one of
# them or copies a function (`__code__`, `FunctionType`), that exercise scores 0; if the notebook raises the
# recursion limit (`sys.setrecursionlimit`, `threading.stack_size`), all four do.
# Code the grader cannot read (`exec`, `eval`, `getattr` with a computed name, `globals()`, `get_ipython()`, a
# magic such as `%run`, a module of your own) outside the other exercises' answers scores all four 0 too.

# %% nbgrader="readonly" id="setup"
import functools
import linecache
import sys
import traceback

import chibigrad as torch
from chibigrad.autograd import AccumulateGrad

import chibigrad.tracebacks
from IPython import get_ipython

chibigrad.tracebacks.install()  # errors read as in PyTorch: your frames and the message, not chibigrad's


def example():
    """A small graph to try things on: y = sin(w * x) + w, with w used twice."""
    x = torch.tensor(2.0, requires_grad=True)
    w = torch.tensor(3.0, requires_grad=True)
    y = (w * x).sin() + w
    return x, w, y


@functools.lru_cache(maxsize=None)
def chain(n=10_000):
    """x and y = x + 1 + 1 + ... (n additions): a graph n + 1 nodes deep, far past the recursion limit.
    Built once (a second or so) and shared by the tests, which only read it."""
    x = torch.tensor(0.0, requires_grad=True)
    y = x
    for _ in range(n):
        y = y + 1.0
    return x, y


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


x, w, y = example()
print(y.grad_fn, y.grad_fn.next_functions)

# %% [markdown] nbgrader="readonly" id="walk-text"
# ## Exercise 1: walk the graph (2 points)
#
# Write `walk(t)`: the list of every node reachable from `t.grad_fn` by following `next_functions`,
# **each node once**, `t.grad_fn` first (the order of the others is up to you). A tensor without
# `grad_fn` has an empty graph: return `[]`. Use a list as a stack and a set of the nodes you have seen.

# %% nbgrader="solution" id="walk"
def walk(t):
    """Every node reachable from t.grad_fn, each once, t.grad_fn first."""
    ### BEGIN SOLUTION
    if t.grad_fn is None:
        return []
    seen, found, stack = {t.grad_fn}, [], [t.grad_fn]
    while stack:
        node = stack.pop()
        found.append(node)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append(child)
    return found
    ### END SOLUTION

# %% nbgrader="tests" id="walk-tests" points=2
# Exercise 01.walk: the visible tests (no output: they pass; grading adds hidden tests)
x, w, y = example()
nodes = walk(y)
assert isinstance(nodes, list), f"walk should return a list, got {type(nodes).__name__}"
assert len(nodes) == len(set(nodes)), "a node appears twice: w's AccumulateGrad is reached along two paths"
assert nodes and nodes[0] is y.grad_fn, "the first node should be y.grad_fn"
assert sorted(n.name() for n in nodes) == ["AccumulateGrad", "AccumulateGrad", "AddBackward0", "MulBackward0",
                                           "SinBackward0"], f"wrong nodes: {[n.name() for n in nodes]}"
assert walk(x) == [], "a leaf has no grad_fn: its graph is empty"
c = torch.tensor(5.0)  # needs no grad: its edge in next_functions is None
got = attempt("walk(x * c), c a constant (its edge is (None, 0))", walk, x * c)
assert [n.name() for n in got] == ["MulBackward0", "AccumulateGrad"], \
    f"x * c (c needs no grad, its edge is (None, 0)): expected MulBackward0 and x's AccumulateGrad, got {got}"
deep_x, deep_y = chain()
got = attempt("walk on a chain of 10,000 additions", walk, deep_y)
assert len(got) == 10_001, f"a chain of 10,000 additions has 10,001 nodes, walk found {len(got)}"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a01_graphs.py, walk
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="summarize-text"
# ## Exercise 2: count the nodes by name (2 points)
#
# Write `summarize(t)`: a dict mapping each node name to how many distinct nodes of that name the graph
# of `t` has, for example `{"AddBackward0": 1, "MulBackward0": 1, "SinBackward0": 1, "AccumulateGrad": 2}`
# for the example graph. A shared node counts once. (Walk the graph again here; do not call `walk`
# from exercise 1, so that each exercise is graded on its own.)

# %% nbgrader="solution" id="summarize"
def summarize(t):
    """{node name: number of distinct nodes with that name} for the graph of t."""
    ### BEGIN SOLUTION
    counts = {}
    if t.grad_fn is None:
        return counts
    seen, stack = {t.grad_fn}, [t.grad_fn]
    while stack:
        node = stack.pop()
        counts[node.name()] = counts.get(node.name(), 0) + 1
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append(child)
    return counts
    ### END SOLUTION

# %% nbgrader="tests" id="summarize-tests" points=2
# Exercise 01.summarize: the visible tests (no output: they pass; grading adds hidden tests)
x, w, y = example()
counts = summarize(y)
assert isinstance(counts, dict), f"summarize should return a dict, got {type(counts).__name__}"
assert counts == {"AddBackward0": 1, "MulBackward0": 1, "SinBackward0": 1, "AccumulateGrad": 2}, \
    f"wrong counts for the example graph: {counts}"
z = x * x * x
assert summarize(z) == {"MulBackward0": 2, "AccumulateGrad": 1}, \
    f"x * x * x has two MulBackward0 nodes and one AccumulateGrad (x's, shared), got {summarize(z)}"
got = attempt("summarize(x * c), c a constant (its edge is None)", summarize, x * torch.tensor(5.0))
assert got == {"MulBackward0": 1, "AccumulateGrad": 1}, f"x * c (c needs no grad, its edge is None): got {got}"
deep_x, deep_y = chain()
got = attempt("summarize on a chain of 10,000 additions", summarize, deep_y)
assert got == {"AddBackward0": 10_000, "AccumulateGrad": 1}, f"a chain of 10,000 additions: got {got}"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a01_graphs.py, summarize
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="find_leaves-text"
# ## Exercise 3: find the leaves (2 points)
#
# Write `find_leaves(t)`: the `.variable` of every `AccumulateGrad` node reachable from `t.grad_fn`,
# each leaf once, in any order: the leaves whose `.grad` `t.backward()` fills. A tensor without `grad_fn`
# has none: return `[]`. Careful: `leaf in some_list` compares tensors with `==`, which compares
# *values*, and two different leaves can hold the same value. Compare with `is` (or keep a set of nodes).

# %% nbgrader="solution" id="find_leaves"
def find_leaves(t):
    """The .variable of every AccumulateGrad node reachable from t.grad_fn, each once."""
    ### BEGIN SOLUTION
    if t.grad_fn is None:
        return []
    leaves, seen, stack = [], {t.grad_fn}, [t.grad_fn]
    while stack:
        node = stack.pop()
        if isinstance(node, AccumulateGrad):
            leaves.append(node.variable)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append(child)
    return leaves
    ### END SOLUTION

# %% nbgrader="tests" id="find_leaves-tests" points=2
# Exercise 01.find_leaves: the visible tests (no output: they pass; grading adds hidden tests)
x, w, y = example()
leaves = find_leaves(y)
assert isinstance(leaves, list), f"find_leaves should return a list, got {type(leaves).__name__}"
assert all(isinstance(v, torch.Tensor) for v in leaves), "return the leaf tensors (node.variable), not nodes"
assert len(leaves) == 2 and any(v is x for v in leaves) and any(v is w for v in leaves), \
    "the example graph has two leaves: x and w (w once, although two paths reach it)"
c = torch.tensor(5.0)  # needs no grad: not a leaf of the graph
assert [v is x for v in find_leaves(x * c)] == [True], "x * c has one leaf, x"
a, b = torch.tensor(1.0, requires_grad=True), torch.tensor(1.0, requires_grad=True)  # equal values
got = find_leaves(a * b + a)
assert len(got) == 2 and any(v is a for v in got) and any(v is b for v in got), \
    f"a * b + a with a and b both 1.0: expected the two leaves a and b, got {len(got)} tensor(s) (compare with `is`)"
deep_x, deep_y = chain()
got = attempt("find_leaves on a chain of 10,000 additions", find_leaves, deep_y)
assert len(got) == 1 and got[0] is deep_x, f"a chain of 10,000 additions has one leaf, got {len(got)}"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a01_graphs.py, find_leaves
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="depth-text"
# ## Exercise 4: depth (3 points)
#
# Write `depth(t)`: the number of nodes on the **longest** path from `t.grad_fn` down along
# `next_functions`, counting both ends. `(x * 2)` has depth 2 (`MulBackward0`, then x's
# `AccumulateGrad`); the example graph has depth 4; a tensor without `grad_fn` has depth 0.
#
# Longest, not shortest: a breadth-first search finds the shortest. One way that never recurses: a
# node's depth is 1 + the largest depth among its children, so compute depths children first. Get an
# order in which every node comes after all nodes that point to it (for example by counting, for each
# node, how many edges point at it, as Kahn's algorithm does), then fill in depths in reverse order.

# %% nbgrader="solution" id="depth"
def depth(t):
    """Number of nodes on the longest path from t.grad_fn to the end of the graph (0 without grad_fn)."""
    ### BEGIN SOLUTION
    if t.grad_fn is None:
        return 0
    parents, stack = {t.grad_fn: 0}, [t.grad_fn]  # node -> number of edges pointing at it
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is not None:
                if child not in parents:
                    parents[child] = 0
                    stack.append(child)
                parents[child] += 1
    order, ready = [], [t.grad_fn]
    while ready:
        node = ready.pop()
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None:
                parents[child] -= 1
                if parents[child] == 0:
                    ready.append(child)
    below = {}
    for node in reversed(order):
        below[node] = 1 + max((below[c] for c, _ in node.next_functions if c is not None), default=0)
    return below[t.grad_fn]
    ### END SOLUTION

# %% nbgrader="tests" id="depth-tests" points=3
# Exercise 01.depth: the visible tests (no output: they pass; grading adds hidden tests)
x, w, y = example()
assert depth(x * 2) == 2, f"x * 2: MulBackward0 -> AccumulateGrad is 2 nodes, got {depth(x * 2)}"
assert depth(y) == 4, f"example graph: AddBackward0 -> SinBackward0 -> MulBackward0 -> AccumulateGrad, got {depth(y)}"
assert depth(x) == 0, "a leaf has no grad_fn: depth 0"
z = x * 2 + x  # two paths to x: lengths 2 and 3
assert depth(z) == 3, f"x * 2 + x: the longest path has 3 nodes, got {depth(z)}"
deep_x, deep_y = chain()
got = attempt("depth on a chain of 10,000 additions", depth, deep_y)
assert got == 10_001, f"a chain of 10,000 additions is 10,001 nodes deep, got {got}"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a01_graphs.py, depth
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="trace_backward-text"
# ## Exercise 5: watch the engine work (3 points)
#
# Write `trace_backward(loss)`: run `loss.backward()` and return the list of nodes **in the order the
# engine ran them**. Do it with hooks: `node.register_prehook(fn)` makes the engine call
# `fn(grad_outputs)` just before it runs `node` (return `None` from `fn` to leave the gradients alone);
# it returns a handle whose `.remove()` takes the hook out again.
#
# - Find the nodes with `chibigrad.autograd.engine.topological_order([loss.grad_fn])` (allowed here).
# - Do not just return that list: the engine may be told to use another ordering, and it skips nodes
#   that receive no gradient. Record what really runs.
# - Remove every hook afterwards, even when backward raises (a second backward through a freed graph
#   raises `RuntimeError`; let it propagate). `try: ... finally: ...` is made for this.
# - A classic trap: `lambda grads: order.append(node)` inside a loop sees the *last* `node` of the loop.

# %% nbgrader="solution" id="trace_backward"
from chibigrad.autograd.engine import topological_order


def trace_backward(loss):
    """Run loss.backward(); return the nodes in the order the engine ran them."""
    ### BEGIN SOLUTION
    ran, handles = [], []
    try:
        for node in topological_order([loss.grad_fn]):
            handles.append(node.register_prehook(lambda grads, node=node: ran.append(node)))
        loss.backward()
    finally:
        for handle in handles:
            handle.remove()
    return ran
    ### END SOLUTION

# %% nbgrader="tests" id="trace_backward-tests" points=3
# Exercise 01.trace_backward: the visible tests (no output: they pass; grading adds hidden tests)
x, w, y = example()
ran = trace_backward(y)
assert isinstance(ran, list), f"trace_backward should return a list, got {type(ran).__name__}"
assert [n.name() for n in ran] == ["AddBackward0", "SinBackward0", "MulBackward0", "AccumulateGrad",
                                   "AccumulateGrad"], f"wrong order: {[n.name() for n in ran]}"
assert ran[0] is y.grad_fn, "the engine starts at loss.grad_fn"
assert w.grad is not None and x.grad is not None, "trace_backward must run loss.backward()"
assert all(not n._pre_hooks for n in ran), "remove your hooks when backward is done"
from chibigrad.autograd.engine import use_ordering
x, w, y = example()
order = topological_order([y.grad_fn])
other = order[:-2] + [order[-1], order[-2]]  # the two AccumulateGrads swapped: another valid order
with use_ordering(lambda roots: list(other)):
    ran = trace_backward(y)
assert [id(n) for n in ran] == [id(n) for n in other], \
    ("under an ordering that runs the two AccumulateGrads the other way round, trace_backward returned them in "
     "the default order: record the nodes inside your hooks as they run, do not return a precomputed list")
x, w, y = example()
y.backward()  # frees the graph: a second backward raises RuntimeError
try:
    trace_backward(y)
except RuntimeError:
    pass
else:
    raise AssertionError("trace_backward on a graph freed by an earlier backward: expected the engine's "
                         "RuntimeError to propagate, got no error")
assert all(not n._pre_hooks for n in topological_order([y.grad_fn])), \
    "when backward raised, your hooks stayed on the graph: remove them in a `finally:` block"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a01_graphs.py, trace_backward
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="outro"
# ## Before you submit
#
# *Kernel > Restart Kernel and Run All Cells*, then **Validate**. "Success" means your notebook passes the
# visible tests, which catch the mistakes students make most often. Grading runs the same cells with **hidden
# tests** added to each tests cell: random graphs with shared nodes and constants, a 25,000-node graph, every
# node kind, and hooks left behind after an error. Code that is right, not just right on the visible examples,
# passes them.
