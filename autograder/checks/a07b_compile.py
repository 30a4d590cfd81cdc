"""Hidden tests of assignment 07b_compile: dead nodes, common-subexpression elimination and constant folding,
on random graphs (writes anywhere, numbers of several types, constants written by the program) and
on real compiled training steps (SGD and Adam). Oracles: the graph run before the pass (numpy), the
properties the pass must leave behind, and eager chibigrad."""
import numpy as np

import chibigrad as torch
import chibigrad.nn.functional as F
from chibigrad import nn, optim
from chibigrad.compile import passes, trace
from chibigrad.compile.graph import Graph, Node

from . import call, expect, forbidden

DEAD_YOURSELF = "find the dead nodes yourself: do not call chibigrad's passes.eliminate_dead_code"

_BINARY = (np.add, np.multiply, np.subtract, np.maximum)
_UNARY = (np.tanh, np.negative, np.abs)
_NUMBERS = (1, 1.0, 2, 0.5, True)


def random_graph(seed, n_ops=30, writes=True):
    """Placeholders, constants and element-wise calls on float64 vectors: some calls repeat earlier ones
    (with the same Node arguments), some write into a call's value or into a constant (``out=``), some
    read only constants. Values are computed while building, as tracing would."""
    rng = np.random.default_rng(seed)
    g = Graph()
    values = [g.placeholder(f"x{i}", rng.uniform(-1, 1, 3)) for i in range(2)]
    values += [g.constant(rng.uniform(-1, 1, 3)) for _ in range(2)]
    pure = []
    for _ in range(n_ops):
        r = rng.random()
        if pure and r < 0.25:  # the same call again
            old = pure[rng.integers(len(pure))]
            args = old.args
            value = old.target(*[a.value if isinstance(a, Node) else a for a in args])
            node = g.call(old.target, old.target_name, args, {}, value, "forward")
        elif writes and r < 0.35:  # a write into an earlier value or a constant
            target = values[rng.integers(2, len(values))]
            other = values[rng.integers(len(values))]
            if target.storage == other.storage or not isinstance(target.value, np.ndarray):
                continue
            np.add(target.value, other.value, out=target.value)
            g.call(np.add, "np.add", (target, other), {"out": (target,)}, target.value, "forward", mutates=target)
            continue
        elif r < 0.55:
            fn = _UNARY[rng.integers(len(_UNARY))]
            a = values[rng.integers(len(values))]
            node = g.call(fn, f"np.{fn.__name__}", (a,), {}, fn(a.value), "forward")
        else:
            fn = _BINARY[rng.integers(len(_BINARY))]
            a = values[rng.integers(len(values))]
            b = values[rng.integers(len(values))] if rng.random() < 0.7 else _NUMBERS[rng.integers(len(_NUMBERS))]
            node = g.call(fn, f"np.{fn.__name__}", (a, b), {}, fn(a.value, b.value if isinstance(b, Node) else b),
                          "forward")
        values.append(node)
        pure.append(node)
    outputs = [values[i] for i in rng.choice(np.arange(4, len(values)), size=min(4, len(values) - 4), replace=False)]
    g.output(outputs)
    return g


def _run(graph, inputs):
    source, namespace = graph.python_code("program")
    exec(source, namespace)
    return namespace["program"](*[np.array(x, copy=True) for x in inputs])


def _inputs(graph):
    return [n.value.copy() for n in graph.nodes if n.op == "placeholder"]


def _same_outputs(what, before, after):
    expect(len(before) == len(after), f"{what}: the graph now has {len(after)} outputs, not {len(before)}")
    for k, (b, a) in enumerate(zip(before, after)):
        expect(np.asarray(a).dtype == np.asarray(b).dtype and np.array_equal(a, b),
               f"{what}: output {k} changed: {b!r} before your pass, {a!r} after")


def _check_pass(what, fn, graph):
    """Run ``fn`` on ``graph``: it returns an int, keeps every output and its value; returns the count."""
    inputs = _inputs(graph)
    before = _run(graph, inputs)
    n_before = len(graph.nodes)
    count = call(what, fn, graph)
    expect(isinstance(count, (int, np.integer)), f"{what}: return the number of nodes, got {count!r}")
    expect(graph.nodes and graph.nodes[-1].op == "output", f"{what}: the output node must stay last")
    after = call(f"running the graph after {what}", _run, graph, inputs)
    _same_outputs(what, before, after)
    return count, n_before


def _args_equal(a, b):
    if isinstance(a, Node) or isinstance(b, Node):
        return a is b
    if type(a) is not type(b):
        return False
    if type(a) in (tuple, list):
        return len(a) == len(b) and all(_args_equal(x, y) for x, y in zip(a, b))
    if type(a) is dict:
        return a.keys() == b.keys() and all(_args_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def _repeats(graph):
    """Pairs of calls with the same target and arguments, neither written into anywhere, with no write in
    between into memory they read: what common-subexpression elimination must leave none of."""
    nodes, found = graph.nodes, []
    written = {n.mutates.storage for n in nodes if n.mutates is not None}
    for i, first in enumerate(nodes):
        if first.op != "call" or first.mutates is not None or first.storage in written:
            continue
        touched = {first.storage} | {a.storage for a in first.inputs}
        for later in nodes[i + 1:]:
            if later.mutates is not None and later.mutates.storage in touched:
                break
            if later.op == "call" and later.mutates is None and later.storage not in written and \
                    later.target is first.target and \
                    _args_equal(later.args, first.args) and _args_equal(later.kwargs, first.kwargs):
                found.append((first.name, later.name))
    return found


def _int_graph():
    """An int64 input scaled by 2 and by 2.0, and compared with 1 and True: equal numbers, other types."""
    g = Graph()
    a = g.placeholder("a", np.arange(4))
    outs = [g.call(np.multiply, "np.multiply", (a, k), {}, a.value * k, "forward") for k in (2, 2.0)]
    outs += [g.call(np.equal, "np.equal", (a, k), {}, a.value == k, "forward") for k in (1, True, 1.0)]
    g.output(outs)
    return g


def check_cse(fn):
    g = _int_graph()
    _check_pass("your pass on a * 2, a * 2.0, a == 1, a == True, a == 1.0 (a: int64)", fn, g)
    g = random_graph(100, n_ops=6, writes=False)
    count, n_before = _check_pass("your pass on a random graph without writes", fn, g)
    expect(count == n_before - len(g.nodes), f"your pass returned {count} but removed {n_before - len(g.nodes)} nodes")
    expect(not _repeats(g), f"a random graph without writes: these calls still repeat each other: {_repeats(g)}")
    for seed in range(40):
        g = random_graph(seed)
        what = f"your pass on random graph {seed}"
        count, n_before = _check_pass(what, fn, g)
        expect(count == n_before - len(g.nodes), f"{what}: it returned {count} but removed "
                                                 f"{n_before - len(g.nodes)} nodes")
        expect(not _repeats(g), f"{what}: these calls still compute the same value: {_repeats(g)}")
        expect(sum(n.mutates is not None for n in g.nodes) == sum(1 for n in g.nodes if n.mutates is not None),
               f"{what}: a write was removed")
    g = random_graph(7)
    writes = sum(n.mutates is not None for n in g.nodes)
    call("your pass", fn, g)
    expect(sum(n.mutates is not None for n in g.nodes) == writes, "your pass removed a node that writes")
    expect(call("your pass, run a second time", fn, g) == 0, "a second run of your pass still found repeats: "
                                                             "merge every repeat in one run")
    _check_real_steps("eliminate_common_subexpressions", fn, fewer=True)


def _foldable(graph):
    written = {n.mutates.storage for n in graph.nodes if n.mutates is not None}
    return [n.name for n in graph.nodes if n.op == "call" and n.mutates is None and n.storage not in written
            and all(a.op == "constant" and a.storage not in written for a in n.inputs)]


def check_fold(fn):
    for seed in range(40):
        g = random_graph(seed)
        what = f"your pass on random graph {seed}"
        n_calls = sum(n.op == "call" for n in g.nodes)
        count, _ = _check_pass(what, fn, g)
        folded = n_calls - sum(n.op == "call" for n in g.nodes)
        expect(count == folded, f"{what}: it returned {count} but {folded} calls were replaced")
        expect(not _foldable(g), f"{what}: these calls read only constants and were not folded: {_foldable(g)}")
        positions = {id(n): i for i, n in enumerate(g.nodes)}
        for i, node in enumerate(g.nodes):
            for a in node.inputs:
                expect(id(a) in positions and positions[id(a)] < i,
                       f"{what}: {node.name} reads {a.name}, which is not in graph.nodes before it")
    _check_real_steps("fold_constants", fn, fewer=False)


def _check_real_steps(name, fn, fewer):
    """A compiled SGD step and a compiled Adam step with the pass: the same parameters as eager."""
    for opt_cls, kw in ((optim.SGD, dict(lr=0.1, momentum=0.9)), (optim.Adam, dict(lr=0.01))):
        results, counts = [], []
        for passes in ([], [fn], None):
            torch.manual_seed(1)
            model = nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 4))
            opt = opt_cls(model.parameters(), **kw)

            def step(x, y):
                opt.zero_grad()
                z = model[0](x)
                loss = F.cross_entropy(model[2](z * torch.sigmoid(z)), y)
                loss.backward()
                opt.step()
                return loss

            run = step if passes is None else torch.compile(step, options={"passes": passes})
            x, y = torch.randn(6, 5), torch.tensor([0, 1, 2, 3, 0, 1])
            for _ in range(4):
                call(f"a compiled {opt_cls.__name__} step with {name}", run, x, y)
            results.append([p.detach().numpy().copy() for p in model.parameters()])
            if passes is not None:
                counts.append(sum(n.op == "call" for n in run.graph.nodes))
        for k, (a, b) in enumerate(zip(results[1], results[2])):
            expect(np.array_equal(a, b), f"{opt_cls.__name__}: with your pass, parameter {k} after 4 steps differs "
                                         "from eager mode's")
        if fewer:
            expect(counts[1] < counts[0], f"{opt_cls.__name__}: the step repeats calls (1 + exp in sigmoid); "
                                          f"{counts[0]} calls without your pass, {counts[1]} with it")


def _reference_dead(graph):
    """The nodes chibigrad's own dead-code elimination removes (run on a copy of the node list)."""
    copy = Graph()
    copy.nodes = list(graph.nodes)
    passes.eliminate_dead_code(copy)
    kept = {id(n) for n in copy.nodes}
    return [n for n in graph.nodes if id(n) not in kept]


def _check_dead(what, fn, graph):
    expected = _reference_dead(graph)
    before = list(graph.nodes)
    with forbidden([passes.eliminate_dead_code], DEAD_YOURSELF):
        got = call(what, fn, graph)
    expect(graph.nodes == before, f"{what}: dead_nodes changed the graph")
    expect(isinstance(got, list) and all(isinstance(n, Node) for n in got), f"{what}: return a list of Nodes")
    expect([id(n) for n in got] == [id(n) for n in expected],
           f"{what}: expected the dead nodes {[n.name for n in expected]}, got {[n.name for n in got]}")


def _long_chain(n):
    """x, then n calls each reading the previous one, the last read by the output; a dead call beside."""
    g = Graph()
    x = g.placeholder("x", np.ones(1))
    g.call(np.negative, "np.negative", (x,), {}, -x.value, "forward")
    prev = x
    for _ in range(n):
        prev = g.call(np.add, "np.add", (prev, 1.0), {}, prev.value + 1.0, "forward")
    g.output([prev])
    return g


def check_dead_nodes(fn):
    for seed in range(30):
        _check_dead(f"dead_nodes on random graph {seed}", fn, random_graph(seed))
    g = random_graph(3)
    g.check(g.nodes[5], False, "forward")
    _check_dead("dead_nodes on a graph with a data check", fn, g)
    _check_dead("dead_nodes on a chain of 20,000 calls", fn, _long_chain(20_000))
    for opt_cls in (optim.SGD, optim.Adam):
        torch.manual_seed(2)
        model = nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 4))
        opt = opt_cls(model.parameters(), lr=0.01)

        def step(x, y):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()

        x, y = torch.randn(6, 5), torch.tensor([0, 1, 2, 3, 0, 1])
        step(x, y)  # the optimizer's state exists: the traced graph is the steady step
        _check_dead(f"dead_nodes on a traced {opt_cls.__name__} step", fn, trace(step, x, y))
