"""Hidden checks of 01_graphs (walking and summarising a computation graph), run by the judge.

Graphs are named by number (``cases.graph_01``) and built on both sides with chibigrad; nodes and leaves
cross as numbers (``cases.node_ids``). The judge's answers come from the engine's own walk of its own copy.
"""
import collections
import functools

from chibigrad.autograd import engine

from .. import cases
from ..judge import exercise, expect


DEEP = cases.GRAPHS_01 - 2  # the deep chain (cases.DEEP_01 additions)
# the named cases every walking exercise is scored on (partial credit): (name, points, graph numbers)
GROUPS = (("small graphs (leaves, constants, shared leaves, two outputs)", 2, (0, 1, 2, 3, 4, 5, 6, 18)),
          ("larger graphs (12 diamonds in a row, random graphs, a freed graph)", 1, tuple(range(7, DEEP))),
          (f"deep graph (a chain of {cases.DEEP_01:,} additions)", 1, (DEEP,)))


def on_every_graph(check):
    """The check ``check(student, what, recipe, t)`` of one graph, run on every graph, a named case per group.
    The deep graph tests that a right answer scales: it earns its points only once the smaller graphs pass (a
    wrong answer that happens to be right on a chain earns nothing for it)."""
    @functools.wraps(check)
    def run(student):
        for name, points, members in GROUPS:
            with student.case(name, points):
                expect(members != (DEEP,) or not any(failure for *_, failure in student.cases),
                       f"{name}: not graded until the smaller graphs pass (it tests that a right answer scales)")
                for index in members:
                    what, t = cases.graph_01(index)
                    check(student, what, {"recipe": "graph_01", "graph": index}, t)
    return run


def nodes_of(t):
    """Every node the engine would visit from ``t`` (its own walk)."""
    return engine.topological_order([t.grad_fn]) if t.grad_fn is not None else []


def expect_list(got, what, items):
    expect(got["type"] == "list", f"{what}: returned a {got['type']}, expected a list")
    expect(not got["foreign"], f"{what}: the list holds {got['foreign']}; expected {items}")


WALKERS = ("topological_order", "_count_dependencies")  # the engine's own walks: the notebook forbids them


@exercise("01_graphs:walk", forbids=WALKERS, no_recursion=True)
@on_every_graph
def walk(student, case, recipe, t):
    what, expected = f"walk on {case}", nodes_of(t)
    got = student.call("walk", recipe, observe="graph_nodes", what=what, timeout=30)
    expect_list(got, what, "nodes (objects with next_functions, such as t.grad_fn)")
    ids = got["ids"]
    expect(len(set(ids)) == len(ids), f"{what}: some node appears more than once; shared nodes must be listed "
                                      "once (remember the nodes you have seen)")
    expect(-1 not in ids, f"{what}: the list holds a node that is not in t's graph")
    expect(len(ids) == len(expected), f"{what}: {len(ids)} nodes, expected {len(expected)}")
    if expected:
        expect(ids[0] == 0, f"{what}: the first node must be t.grad_fn")


@exercise("01_graphs:summarize", forbids=WALKERS, no_recursion=True)
@on_every_graph
def summarize(student, case, recipe, t):
    what = f"summarize on {case}"
    expected = dict(sorted(collections.Counter(n.name() for n in nodes_of(t)).items()))
    got = student.call("summarize", recipe, observe="graph_value", what=what, timeout=30)
    expect(isinstance(got, dict), f"{what}: returned a {type(got).__name__}, expected a dict")
    expect(got == expected, f"{what}: got {dict(sorted(got.items()))}, expected {expected}")


@exercise("01_graphs:find_leaves", forbids=WALKERS, no_recursion=True)
@on_every_graph
def find_leaves(student, case, recipe, t):
    what = f"find_leaves on {case}"
    expected = {id(n.variable) for n in nodes_of(t) if hasattr(n, "variable")}
    got = student.call("find_leaves", recipe, observe="graph_leaves", what=what, timeout=30)
    expect_list(got, what, "the leaf tensors themselves (an AccumulateGrad node's .variable)")
    ids = got["ids"]
    expect(len(set(ids)) == len(ids), f"{what}: a leaf appears more than once (compare tensors with `is`, not "
                                      "`==` or `in`, which compare values)")
    expect(-1 not in ids and len(ids) == len(expected),
           f"{what}: found {len(ids)} leaves, expected {len(expected)} (every leaf the graph reaches, each once, "
           "even leaves that hold equal values)")


def longest_path(t):
    """Nodes on the longest path from t.grad_fn down to a leaf's node (0 without grad_fn)."""
    depth = {}
    for node in reversed(nodes_of(t)):  # the engine's order lists a node before those it feeds
        depth[node] = 1 + max((depth[n] for n, _ in node.next_functions if n is not None), default=0)
    return depth[t.grad_fn] if depth else 0


@exercise("01_graphs:depth", forbids=WALKERS, no_recursion=True)
@on_every_graph
def depth(student, case, recipe, t):
    what, expected = f"depth on {case}", longest_path(t)
    got = student.call("depth", recipe, observe="graph_value", what=what, timeout=30)
    expect(type(got) is int, f"{what}: returned a {type(got).__name__}, expected an int")
    hint = ""
    if got < expected:
        hint = " (the longest path, not the shortest: a node's depth is 1 + the largest depth below it)"
    elif abs(got - expected) == 1:
        hint = " (count nodes, both ends included: y = x * 2 has depth 2)"
    expect(got == expected, f"{what}: got {got}, expected {expected}{hint}")


TRACES = (("a simple loss", ["simple"]), ("random graphs", list(map(str, range(5)))),
          ("nodes that receive no gradient", ["skip"]))  # named cases: (name, trace_case_01 kinds)


@exercise("01_graphs:trace_backward")
def trace_backward(student):
    for name, kinds in TRACES:
        with student.case(name):
            for kind in kinds:
                expect_trace(student, kind)
    with student.case("a graph already freed by backward()"):
        got = student.call("trace_backward", {"recipe": "graph_01", "trace": "freed"}, observe="trace",
                           what="trace_backward on a graph already freed by backward()")
        expect(got["error"] == "RuntimeError", "trace_backward on a graph already freed by backward(): expected the "
               f"engine's RuntimeError to propagate, got {got['error'] or 'no error'}; do not catch it")
        expect(not got["hooks_kept"], "trace_backward on a freed graph: backward raised and your hooks stayed "
                                      "registered; remove them in a `finally:` block")


def expect_trace(student, kind):
    case, loss, ordering, skipped = cases.trace_case_01(kind)
    what = f"trace_backward on {case}"
    ids = cases.node_ids(loss)
    planned = (cases.fifo_order if ordering == "fifo" else engine.topological_order)([loss.grad_fn])
    expected = [ids[id(n)] for n in planned if n not in skipped]
    got = student.call("trace_backward", {"recipe": "graph_01", "trace": kind}, observe="trace", what=what)
    expect(not got["hooks_kept"], f"{what}: hooks are still registered afterwards; remove them (each "
                                  "register_prehook returns a handle with .remove())")
    expect_list(got, what, "the list of nodes the engine ran")
    if kind == "simple":
        expect(got["grads"], "trace_backward must run loss.backward(): x.grad is still None")
    if got["ids"] != expected:
        first = next((i for i, (a, b) in enumerate(zip(got["ids"], expected)) if a != b),
                     min(len(got["ids"]), len(expected)))
        raise AssertionError(
            f"{what}: not the order the engine ran the nodes in ({len(got['ids'])} nodes, expected "
            f"{len(expected)}); first difference at position {first}. Record inside hooks while backward runs "
            "(the engine may use another ordering, and skips nodes that receive no gradient); watch out for a "
            "hook that closes over a loop variable.")
