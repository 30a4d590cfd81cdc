# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader="readonly" id="intro"
# # Assignment 07b: passes over a compiled step
#
# Chapter 7b in five lines:
#
# - `chibigrad.compile(step)` runs a training step once while recording every numpy call (forward,
#   backward and the optimizer's update) into a `Graph`, then runs generated straight-line code.
# - `graph.nodes` is a list in program order. A `Node` has `op` ("placeholder", "constant", "call",
#   "check", "output"), `name`, `target` (the function called), `args` and `kwargs` (other Nodes appear
#   there as themselves), `value` (what it computed while tracing) and `inputs` (the Nodes it reads).
# - A call that **writes** into an array (`np.add(a, b, out=a)`, `a[i] = v`) has `node.mutates`, the Node
#   of the array it writes; `node.storage` identifies the memory a value lives in (views share it).
# - A pass changes `graph.nodes` in place; `chibigrad.compile(step, options={"passes": [my_pass]})` runs
#   your pass on the real step before generating code. `trace(step, *args)` runs a step once and returns
#   its graph as recorded, before any pass.
# - Results must stay the same, bit for bit: a pass may only remove work that cannot change them.
#
# Write your code where a cell says `raise NotImplementedError("Exercise ...")` (delete that line). The
# cell after each solution runs visible tests; grading adds hidden ones (random graphs, writes in every
# position, real training steps). The exercises are graded separately: don't use one exercise's answer in
# the other.

# %% nbgrader="readonly" id="setup"
import linecache
import sys
import traceback

import numpy as np

import chibigrad as torch
from chibigrad import nn, optim
from chibigrad.compile import passes, trace
from chibigrad.compile.graph import Graph, Node

import chibigrad.tracebacks
from IPython import get_ipython

chibigrad.tracebacks.install()  # errors read as in PyTorch: your frames and the message, not chibigrad's


def replace_uses(graph, old, new):
    """Make every node of ``graph`` that reads Node ``old`` read Node ``new`` instead."""
    def swap(obj):
        if obj is old:
            return new
        if type(obj) in (tuple, list):
            return type(obj)(swap(x) for x in obj)
        if type(obj) is dict:
            return {k: swap(v) for k, v in obj.items()}
        return obj
    for node in graph.nodes:
        node.args, node.kwargs = swap(node.args), swap(node.kwargs)


def make_constant(graph, value):
    """A new constant Node holding ``value``; it is not in ``graph.nodes`` until you put it there."""
    return Node("constant", graph._name("const"), value=value)


def run_graph(graph, *inputs):
    """Run the code generated from ``graph`` on copies of ``inputs`` (one array per placeholder)."""
    source, namespace = graph.python_code("program")
    exec(source, namespace)
    return namespace["program"](*[np.array(x, copy=True) for x in inputs])


def calls(graph):
    return [n for n in graph.nodes if n.op == "call"]


def example():
    """A small graph: x and a constant c; two equal products, a write into x, the product again."""
    g = Graph()
    x = g.placeholder("x", np.array([1.0, 2.0, 3.0]))
    c = g.constant(np.array([0.5, 0.25, 2.0]))
    p = g.call(np.multiply, "np.multiply", (x, c), {}, x.value * c.value, "forward")
    q = g.call(np.multiply, "np.multiply", (x, c), {}, x.value * c.value, "forward")
    s = g.call(np.add, "np.add", (p, q), {}, p.value + q.value, "forward")
    g.call(np.add, "np.add", (x, 1.0), {"out": (x,)}, x.value + 1.0, "forward", mutates=x)
    r = g.call(np.multiply, "np.multiply", (x, c), {}, (x.value + 1.0) * c.value, "forward")
    d = g.call(np.add, "np.add", (c, c), {}, c.value + c.value, "forward")
    e = g.call(np.multiply, "np.multiply", (d, x), {}, d.value * x.value, "forward")
    g.output([s, q, r, e])
    return g


def attempt(what, fn, *args):
    """fn(*args); an error becomes one sentence: the case (`what`), what came back, and the line that raised it."""
    try:
        return fn(*args)
    except RecursionError:
        message = (f"{what}: RecursionError. Graphs built by loops are far deeper than Python's recursion "
                   "limit; walk them with an explicit stack (a list) instead of recursive calls")
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


def silu_step(passes=()):
    """A compiled training step of a small network with SiLU written out (z * sigmoid(z)), the
    parameters after four steps, and the number of numpy calls in its graph."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Linear(8, 3))
    opt = optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        z = model[0](x)
        h = z * torch.sigmoid(z)
        loss = torch.nn.functional.cross_entropy(model[1](h), y)
        loss.backward()
        opt.step()
        return loss

    compiled = torch.compile(step, options={"passes": list(passes)})
    x, y = torch.randn(5, 6), torch.tensor([0, 2, 1, 1, 0])
    for _ in range(4):
        compiled(x, y)
    return [p.detach().numpy().copy() for p in model.parameters()], len(calls(compiled.graph))

# %% [markdown] nbgrader="readonly" id="dead_nodes-text"
# ## Exercise 1: dead code (2 points)
#
# A traced step holds calls whose results nothing reads (the engine computes some values for checks or
# for cases that did not happen). Write `dead_nodes(graph)`, the analysis behind dead-code elimination:
#
# - A node is **live** if it is the output, a `"check"` (its `if` must still run), a call that writes
#   (`node.mutates is not None`), or if a live node reads it (it is in that node's `inputs`).
# - Return every other node (placeholders and constants included), in program order, as a list of Nodes.
#   Don't change the graph.
# - A graph from a loop can have tens of thousands of nodes: no recursion.
#
# chibigrad's own pass, `passes.eliminate_dead_code`, is off limits here. **The grader reads your code:**
# if `dead_nodes` or anything it uses names `eliminate_dead_code`, copies a function (`__code__`,
# `FunctionType`), or the notebook raises the recursion limit (`sys.setrecursionlimit`,
# `threading.stack_size`), this exercise scores 0.
# Code the grader cannot read (`exec`, `eval`, `getattr` with a computed name, `globals()`, `get_ipython()`, a
# magic such as `%run`, a module of your own) outside the other exercises' answers scores it 0 too.

# %% nbgrader="solution" id="dead_nodes"
def dead_nodes(graph):
    """The nodes nothing live needs, in program order."""
    ### BEGIN SOLUTION
    live = set()
    for node in reversed(graph.nodes):
        if node.op in ("output", "check") or node.mutates is not None or id(node) in live:
            live.add(id(node))
            live.update(id(a) for a in node.inputs)
    return [n for n in graph.nodes if id(n) not in live]
    ### END SOLUTION

# %% nbgrader="tests" id="dead_nodes-tests" points=2
# Exercise 07b.dead_nodes: the visible tests (no output: they pass; grading adds hidden tests)
g = Graph()
x = g.placeholder("x", np.array([1.0, 2.0]))
unused = g.placeholder("unused", np.array([0.0]))
a = g.call(np.multiply, "np.multiply", (x, 2.0), {}, x.value * 2.0, "forward")
b = g.call(np.add, "np.add", (a, 1.0), {}, a.value + 1.0, "forward")
t = g.call(np.add, "np.add", (x, 1.0), {}, x.value + 1.0, "forward")
write = g.call(np.add, "np.add", (t, x), {"out": (t,)}, t.value, "forward", mutates=t)
c = g.call(np.multiply, "np.multiply", (x, 3.0), {}, x.value * 3.0, "forward")
g.output([c])
nodes_before = list(g.nodes)
dead = attempt("dead_nodes on a small graph", dead_nodes, g)
assert g.nodes == nodes_before, "dead_nodes must not change the graph"
assert isinstance(dead, list) and all(isinstance(n, Node) for n in dead), "return a list of Nodes"
names = [{t: "t = x + 1", write: "t += x"}.get(n, n.name) for n in dead]  # the write is named after t
assert t not in dead and write not in dead, \
    f"t += x writes into t: the write is live, and so is t (the write reads it): expected neither among the dead " \
    f"nodes, got {names}"
assert names == ["unused", "multiply", "add"], \
    f"b = a + 1 is read by nothing, and a only by b: expected ['unused', 'multiply', 'add'], got {names}"

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))

def train_step(inputs, target):
    net.zero_grad()
    torch.nn.functional.cross_entropy(net(inputs), target).backward()

chain = Graph()
prev = chain.placeholder("x", np.ones(1))
for _ in range(10_000):
    prev = chain.call(np.add, "np.add", (prev, 1.0), {}, prev.value + 1.0, "forward")
chain.output([prev])
got = attempt("dead_nodes on a chain of 10,000 calls (no recursion)", dead_nodes, chain)
assert got == [], f"every call of the chain leads to the output: nothing is dead, got {len(got)} dead nodes"

step_graph = trace(train_step, torch.randn(5, 4), torch.tensor([0, 1, 1, 0, 1]))
got = attempt("dead_nodes on a traced training step", dead_nodes, step_graph)
traced = list(step_graph.nodes)
removed = passes.eliminate_dead_code(step_graph)  # chibigrad's pass, after yours, as the reference
expected = [n for n in traced if n not in step_graph.nodes]
assert [n.name for n in got] == [n.name for n in expected], \
    f"a traced training step: chibigrad's pass removes {[n.name for n in expected]}, you found {[n.name for n in got]}"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a07b_compile.py, dead_nodes
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="cse-text"
# ## Exercise 2: common-subexpression elimination (4 points)
#
# Eager code often computes the same thing twice: chibigrad's sigmoid computes `1 + exp` in two branches,
# a loss may recompute what forward had. Write `eliminate_common_subexpressions(graph)`:
#
# - Two call nodes compute the same value when they have the same `target` (the same function: `is`),
#   the same arguments (a Node argument must be the **same Node**; a number must be equal **and of the same
#   type**: `x + 1` and `x + 1.0` differ in dtype) and the same keyword arguments.
# - Keep the first; make every later reader of the second read the first (`replace_uses`), and drop the
#   second from `graph.nodes`.
# - Writes (`node.mutates is not None`, into the memory `node.mutates.storage`) need care:
#   - never merge a node that writes;
#   - never merge two nodes if either one's memory (`node.storage`) is written anywhere in the graph
#     (after merging they would share it, and a write into one would change the other);
#   - after a write into some memory, a node computed earlier *from* that memory no longer holds the value
#     a later identical call would compute: don't reuse it past the write.
# - Return the number of nodes removed.
#
# In `example()` the second product `q` repeats `p` (merge them); the product `r` comes after a write into
# `x` (keep it).

# %% nbgrader="solution" id="cse"
def eliminate_common_subexpressions(graph):
    """Merge call nodes that compute the same value; return how many were removed."""
    ### BEGIN SOLUTION
    def same(a, b):
        if isinstance(a, Node) or isinstance(b, Node):
            return a is b
        if type(a) is not type(b):
            return False
        if type(a) in (tuple, list):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        if type(a) is dict:
            return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        if isinstance(a, np.ndarray):
            return a is b
        return bool(a == b)

    written_ever = {n.mutates.storage for n in graph.nodes if n.mutates is not None}
    available, kept, removed = [], [], 0
    for node in graph.nodes:
        if node.op == "call" and node.mutates is not None:
            written = node.mutates.storage
            available = [n for n in available if n.storage != written and all(a.storage != written
                                                                                  for a in n.inputs)]
        elif node.op == "call" and node.storage not in written_ever:
            match = next((n for n in available if n.target is node.target and same(n.args, node.args)
                          and same(n.kwargs, node.kwargs)), None)
            if match is not None:
                replace_uses(graph, node, match)
                removed += 1
                continue
            available.append(node)
        kept.append(node)
    graph.nodes = kept
    return removed
    ### END SOLUTION

# %% nbgrader="tests" id="cse-tests" points=4
# Exercise 07b.cse: the visible tests (no output: they pass; grading adds hidden tests)
g = example()
x = np.array([1.0, 2.0, 3.0])
before = run_graph(g, x)
removed = attempt("eliminate_common_subexpressions(example())", eliminate_common_subexpressions, g)
after = attempt("running the graph after your pass", run_graph, g, x)
assert all(np.array_equal(a, b) for a, b in zip(after, before)), \
    f"example(): the outputs changed: {list(before)} before your pass, {list(after)} after"
assert removed == 1, f"example(): one node repeats another (q = x * c, like p), expected 1 removed, got {removed}"
assert len(calls(g)) == 6, f"example(): expected 6 calls left, got {[n.name for n in calls(g)]}"

g = Graph()
a = g.placeholder("a", np.array([1, 2]))
i = g.call(np.add, "np.add", (a, 1), {}, a.value + 1, "forward")
f = g.call(np.add, "np.add", (a, 1.0), {}, a.value + 1.0, "forward")
g.output([i, f])
removed = attempt("a + 1 and a + 1.0", eliminate_common_subexpressions, g)
out = run_graph(g, np.array([1, 2]))
assert removed == 0 and out[0].dtype != out[1].dtype, \
    "a + 1 (int64) and a + 1.0 (float64) are different values: compare numbers with their types"

g = Graph()
w = g.placeholder("w", np.ones(2))
for _ in range(2):
    g.call(np.subtract, "np.subtract", (w, 0.5), {"out": (w,)}, w.value, "update", mutates=w)
g.output([w])
removed = attempt("two identical writes", eliminate_common_subexpressions, g)
assert removed == 0 and np.array_equal(run_graph(g, np.ones(2))[0], [0.0, 0.0]), \
    "two calls that write (w -= 0.5, twice) both have to run: never merge a node that writes"

g = Graph()
v = g.placeholder("v", np.array([0.123, 2.987]))
r1 = g.call(np.round, "np.round", (v,), {"decimals": 1}, np.round(v.value, decimals=1), "forward")
r2 = g.call(np.round, "np.round", (v,), {"decimals": 2}, np.round(v.value, decimals=2), "forward")
g.output([r1, r2])
removed = attempt("np.round(v, decimals=1) and np.round(v, decimals=2)", eliminate_common_subexpressions, g)
out = run_graph(g, np.array([0.123, 2.987]))
assert removed == 0 and np.array_equal(out[1], [0.12, 2.99]), \
    "np.round(v, decimals=1) and np.round(v, decimals=2) differ in a keyword argument: compare kwargs too"

params, n_calls = attempt("a training step with your pass", silu_step, [eliminate_common_subexpressions])
reference, n_plain = silu_step()
assert all(np.array_equal(p, r) for p, r in zip(params, reference)), \
    "with your pass in chibigrad.compile, the parameters after 4 steps differ from those without it"
assert n_calls < n_plain, f"the SiLU step has repeated calls (1 + exp): {n_plain} calls before your pass, {n_calls} after"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a07b_compile.py, cse
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="fold-text"
# ## Exercise 3: constant folding (3 points)
#
# A call whose inputs are all constants computes the same value at every replay: compute it once, while
# compiling, and replace it by a constant. Write `fold_constants(graph)`:
#
# - Fold a call node when every Node it reads is a `"constant"` (and it writes nothing): its value is
#   `node.target(*args, **kwargs)` with each Node argument replaced by that Node's `value` (arguments
#   may be tuples, lists or dicts holding Nodes).
# - Replace it by `make_constant(graph, value)` **at the same place** in `graph.nodes`, and make its readers
#   read the new constant (`replace_uses`). Go in program order: a call reading a constant you just made is
#   folded too.
# - The generated code starts every run from the traced value of a constant, so memory that some node
#   **writes into** (`node.mutates.storage`) changes during the run: never fold a call that reads such
#   memory, nor one whose own value (`node.storage`) is written later.
# - Return the number of calls folded.
#
# In `example()`, `d = c + c` and then `e = d * x`: only `d` folds (`e` reads the placeholder `x`).

# %% nbgrader="solution" id="fold"
def fold_constants(graph):
    """Replace calls on constants by their values; return how many were folded."""
    ### BEGIN SOLUTION
    written = {n.mutates.storage for n in graph.nodes if n.mutates is not None}

    def value(obj):
        if isinstance(obj, Node):
            return obj.value
        if type(obj) in (tuple, list):
            return type(obj)(value(x) for x in obj)
        if type(obj) is dict:
            return {k: value(v) for k, v in obj.items()}
        return obj

    folded = 0
    for i, node in enumerate(graph.nodes):
        if node.op != "call" or node.mutates is not None:
            continue
        if node.storage not in written and all(a.op == "constant" and a.storage not in written
                                               for a in node.inputs):
            constant = make_constant(graph, node.target(*value(node.args), **value(node.kwargs)))
            graph.nodes[i] = constant
            replace_uses(graph, node, constant)
            folded += 1
    return folded
    ### END SOLUTION

# %% nbgrader="tests" id="fold-tests" points=3
# Exercise 07b.fold: the visible tests (no output: they pass; grading adds hidden tests)
g = example()
x = np.array([1.0, 2.0, 3.0])
before = run_graph(g, x)
folded = attempt("fold_constants(example())", fold_constants, g)
after = attempt("running the graph after your pass", run_graph, g, x)
assert all(np.array_equal(a, b) for a, b in zip(after, before)), \
    f"example(): the outputs changed: {list(before)} before your pass, {list(after)} after"
assert folded == 1, f"example(): only d = c + c reads nothing but constants, expected 1 folded, got {folded}"
assert [n.op for n in g.nodes].count("constant") == 2, "example(): put the new constant into graph.nodes"
e = next(n for n in calls(g) if n.target is np.multiply and n.args[0].op == "constant")
assert g.nodes.index(e.args[0]) < g.nodes.index(e), \
    "the new constant must come before the nodes that read it: put it where the folded call was"

g = Graph()
c = g.constant(np.array([1.0, 2.0]))
t = g.call(np.multiply, "np.multiply", (c, 3.0), {}, c.value * 3.0, "forward")
u = g.call(np.add, "np.add", (t, 1.0), {}, t.value + 1.0, "forward")
g.output([u])
folded = attempt("a chain of two calls on a constant", fold_constants, g)
assert folded == 2 and calls(g) == [], f"c * 3 + 1: both calls fold, in program order; got {folded} folded"
assert np.array_equal(run_graph(g)[0], [4.0, 7.0]), "c * 3 + 1 should still give [4, 7]"

g = Graph()
z = g.placeholder("z", np.array([1.0, 1.0]))
acc = g.constant(np.zeros(2))
g.call(np.add, "np.add", (acc, z), {"out": (acc,)}, acc.value, "forward", mutates=acc)
dbl = g.call(np.multiply, "np.multiply", (acc, 2.0), {}, acc.value * 2, "forward")
g.output([dbl])
before = run_graph(g, np.array([1.0, 1.0]))
folded = attempt("a constant written by the program", fold_constants, g)
after = run_graph(g, np.array([1.0, 1.0]))
assert folded == 0 and np.array_equal(after[0], before[0]), \
    "acc is a constant that the program writes into (acc += z): a call reading it must not be folded"

g = Graph()
p = g.placeholder("p", np.array([1.0]))
k = g.constant(np.array([2.0]))
joined = g.call(np.concatenate, "np.concatenate", ((p, k),), {}, np.concatenate((p.value, k.value)), "forward")
g.output([joined])
folded = attempt("np.concatenate((p, k)), p a placeholder", fold_constants, g)
assert folded == 0 and np.array_equal(run_graph(g, np.array([5.0]))[0], [5.0, 2.0]), \
    "np.concatenate((p, k)) reads the placeholder p inside a tuple: look at node.inputs, not only the top-level args"

params, _ = attempt("a training step with your pass", silu_step, [fold_constants])
reference, _ = silu_step()
assert all(np.array_equal(p, r) for p, r in zip(params, reference)), \
    "with your pass in chibigrad.compile, the parameters after 4 steps differ from those without it"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a07b_compile.py, fold
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="outro"
# ## Before you submit
#
# *Kernel > Restart Kernel and Run All Cells*, then **Validate**. "Success" means your notebook passes the
# visible tests, which catch the mistakes students make most often. Grading runs the same cells with **hidden
# tests** added to each tests cell: random graphs with writes in every position, and real training steps.
# Code that is right, not just right on the visible examples, passes them.
