"""Hidden tests of assignment 01_graphs: walking and summarising a computation graph."""
import collections

import chibigrad as torch
from chibigrad import viz
from chibigrad.autograd import engine
from chibigrad.autograd.function import Function
from chibigrad.autograd.node import AccumulateGrad

from . import (DEEP, call, deep_chain, diamond_chain, expect, forbidden, leaf, names, nodes_of, random_graph)

WALK_YOURSELF = ("this exercise is about walking the graph yourself: do not call the engine's "
                 "topological_order or _count_dependencies (or chibigrad.viz's walk); follow next_functions "
                 "with your own stack")


def graph_cases():
    """``(description, tensor)``: the graphs every walking exercise is checked on."""
    x = leaf(2.0)
    yield "a leaf that requires grad (it has no grad_fn)", x
    yield "a result that needs no gradient (no grad_fn)", torch.tensor(2.0) * 3
    yield "y = x * x (one node with two edges to the same leaf)", x * x
    a = x.sin()
    yield "a diamond: a = x.sin(); y = a * a.cos() + a (a is shared)", a * a.cos() + a
    yield "y = (x * c + 3).tanh() with a constant c (None edges)", (x * torch.tensor(1.5) + 3).tanh()
    x1, x2 = leaf(1.0), leaf(1.0)
    yield "y = x1 * x2 + x1 with two different leaves that hold equal values", x1 * x2 + x1
    v = torch.tensor([1.0, 2.0], requires_grad=True)
    first, second = v.unbind()
    yield "y = first * second from first, second = v.unbind() (one node, two outputs)", first * second
    yield "12 diamonds in a row (4096 paths, 37 nodes)", diamond_chain(12)[1]
    for seed in range(8):
        yield f"random graph (seed {seed})", random_graph(seed, n_ops=40)[0]
    out, _ = random_graph(100, n_ops=20)
    out.backward()
    yield "a random graph after backward() freed it (next_functions are still there)", out
    yield f"a chain of {DEEP} additions (deeper than Python's recursion limit)", deep_chain()[1]


def _run(what, fn, t):
    with forbidden([engine.topological_order, engine._count_dependencies, viz._walk], WALK_YOURSELF):
        return call(what, fn, t)


def check_walk(walk):
    for case, t in graph_cases():
        expected = nodes_of(t)
        got = _run(f"walk on {case}", walk, t)
        expect(isinstance(got, list), f"walk on {case}: returned a {type(got).__name__}, expected a list of nodes")
        expect(all(hasattr(n, "next_functions") for n in got),
               f"walk on {case}: the list holds {sorted({type(n).__name__ for n in got})}; expected nodes "
               "(objects with next_functions, such as t.grad_fn)")
        expect(len({id(n) for n in got}) == len(got),
               f"walk on {case}: some node appears more than once; shared nodes must be listed once "
               "(remember the nodes you have seen)")
        got_ids = {id(n) for n in got}
        missing = [n.name() for n in expected if id(n) not in got_ids]
        expect(not missing, f"walk on {case}: missing nodes {missing}")
        expect(len(got) == len(expected), f"walk on {case}: {len(got)} nodes, expected {len(expected)}")
        if expected:
            expect(got[0] is t.grad_fn, f"walk on {case}: the first node must be t.grad_fn, got {got[0].name()}")


def check_summarize(summarize):
    for case, t in graph_cases():
        expected = dict(collections.Counter(names(nodes_of(t))))
        got = _run(f"summarize on {case}", summarize, t)
        expect(isinstance(got, dict), f"summarize on {case}: returned a {type(got).__name__}, expected a dict")
        got = dict(got)
        expect(got == expected, f"summarize on {case}: got {_sorted(got)}, expected {_sorted(expected)}")


def _sorted(counts):
    return dict(sorted(counts.items()))


def check_find_leaves(find_leaves):
    for case, t in graph_cases():
        expected = [n.variable for n in nodes_of(t) if isinstance(n, AccumulateGrad)]
        got = _run(f"find_leaves on {case}", find_leaves, t)
        expect(isinstance(got, list), f"find_leaves on {case}: returned a {type(got).__name__}, expected a list")
        expect(all(isinstance(v, torch.Tensor) for v in got),
               f"find_leaves on {case}: the list holds {sorted({type(v).__name__ for v in got})}; expected the "
               "leaf tensors themselves (an AccumulateGrad node's .variable)")
        expect(len({id(v) for v in got}) == len(got),
               f"find_leaves on {case}: a leaf appears more than once (compare tensors with `is`, not `==` "
               "or `in`, which compare values)")
        expect({id(v) for v in got} == {id(v) for v in expected},
               f"find_leaves on {case}: found {len(got)} leaves, expected {len(expected)} (every leaf the "
               "graph reaches, each once, even leaves that hold equal values)")


def longest_path(t):
    """Nodes on the longest path from t.grad_fn down to a leaf's node (0 without grad_fn)."""
    order = nodes_of(t)
    depth = {}
    for node in reversed(order):  # the engine's order lists a node before those it feeds
        depth[node] = 1 + max((depth[n] for n, _ in node.next_functions if n is not None), default=0)
    return depth[t.grad_fn] if order else 0


def check_depth(depth):
    for case, t in graph_cases():
        expected = longest_path(t)
        got = _run(f"depth on {case}", depth, t)
        expect(isinstance(got, int), f"depth on {case}: returned a {type(got).__name__}, expected an int")
        hint = ""
        if got < expected:
            hint = " (the longest path, not the shortest: a node's depth is 1 + the largest depth below it)"
        elif got == expected + 1 or got == expected - 1:
            hint = " (count nodes, both ends included: y = x * 2 has depth 2)"
        expect(got == expected, f"depth on {case}: got {got}, expected {expected}{hint}")


class _NoGradient(Function):
    """Identity whose backward sends no gradient: nodes below it never run."""

    @staticmethod
    def forward(ctx, a):
        return a.clone()

    @staticmethod
    def backward(ctx, grad):
        return None


def _fifo_order(roots):
    """A valid order that differs from the engine's: Kahn's algorithm, first come first served."""
    deps = engine._count_dependencies(roots)
    ready = collections.deque(n for n in dict.fromkeys(roots) if not deps.get(n))
    order = []
    while ready:
        node = ready.popleft()
        order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is not None:
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    ready.append(nxt)
    return order


def _recording(ordering, record):
    def wrapper(roots):
        record[:] = ordering(roots)
        return record

    return wrapper


def _hooks(nodes):
    return [len(n._pre_hooks) for n in nodes]


def _trace_case(trace_backward, case, loss, ordering, skipped=()):
    nodes = nodes_of(loss)
    before = _hooks(nodes)
    planned = []
    with engine.use_ordering(_recording(ordering, planned)):
        got = call(f"trace_backward on {case}", trace_backward, loss)
    expected = [n for n in planned if n not in skipped]
    expect(_hooks(nodes) == before, f"trace_backward on {case}: hooks are still registered afterwards; remove "
                                    "them (each register_prehook returns a handle with .remove())")
    expect(isinstance(got, list), f"trace_backward on {case}: returned a {type(got).__name__}, expected a list")
    expect(all(hasattr(n, "next_functions") for n in got),
           f"trace_backward on {case}: expected the list of nodes the engine ran, got "
           f"{sorted({type(n).__name__ for n in got})}")
    if [id(n) for n in got] != [id(n) for n in expected]:
        first = next((i for i, (a, b) in enumerate(zip(got, expected)) if a is not b), min(len(got), len(expected)))
        raise AssertionError(
            f"trace_backward on {case}: not the order the engine ran the nodes in; first difference at position "
            f"{first}.\n got:      {names(got)[:first + 3]}...\n expected: {names(expected)[:first + 3]}...\n"
            "Record inside hooks while backward runs (the engine may use another ordering, and skips nodes "
            "that receive no gradient); watch out for a hook that closes over a loop variable.")


def check_trace_backward(trace_backward):
    with forbidden([viz.backward_frames], "trace_backward: record the order with your own hooks; "
                                          "chibigrad.viz.backward_frames is the course's finished version of it"):
        _check_trace_backward(trace_backward)


def _check_trace_backward(trace_backward):
    x = leaf(1.5)
    _trace_case(trace_backward, "y = (x * x).sin() + x", (x * x).sin() + x, engine.topological_order)
    expect(x.grad is not None, "trace_backward must run loss.backward(): x.grad is still None")
    for seed in range(5):
        out, _ = random_graph(seed, n_ops=30)
        _trace_case(trace_backward, f"a random graph (seed {seed}) under another valid ordering", out, _fifo_order)
    x = leaf(0.7)
    hidden = x.sin()
    y = _NoGradient.apply(hidden) + x.cos()
    _trace_case(trace_backward, "a graph whose branch x.sin() receives no gradient (its node never runs)", y,
                engine.topological_order, skipped=[hidden.grad_fn])
    x = leaf(0.5)
    y = (x * x).sum()
    y.backward()  # frees the saved tensors: a second backward raises
    nodes = nodes_of(y)
    before = _hooks(nodes)
    try:
        trace_backward(y)
    except RuntimeError:
        pass
    else:
        raise AssertionError("trace_backward on a graph already freed by backward(): expected the engine's "
                             "RuntimeError to propagate; do not catch it")
    expect(_hooks(nodes) == before, "trace_backward on a freed graph: backward raised and your hooks stayed "
                                    "registered; remove them in a `finally:` block")
