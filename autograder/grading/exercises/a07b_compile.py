"""Hidden checks of 07b_compile (dead nodes, common-subexpression elimination, constant folding), run by the judge.

The student process builds each graph from its recipe (``cases.compile_graph``), runs the student's pass on it
and sends the graph back as data (``cases.graph_data``). The judge builds the same graph itself and runs both
the graph it built and the graph that came back with its own interpreter (:func:`run_nodes`: numpy functions
from a fixed table, looked up by name; nothing the student sent is executed), on the traced inputs and on fresh
ones. A pass that replaces ``graph.python_code`` changes nothing here: the code is never asked for.
"""
import numpy as np

from chibigrad.compile import passes
from chibigrad.compile.graph import Graph

from .. import cases
from ..judge import exercise, expect

TARGETS = {f"np.{name}": getattr(np, name) for name in (
    "add", "multiply", "subtract", "maximum", "tanh", "negative", "absolute", "equal", "round", "concatenate")}


def _value(arg, env):
    if type(arg) is tuple and len(arg) == 2 and arg[0] == "@node":
        expect(arg[1] in env, "a node reads a node that is not before it in graph.nodes")
        return env[arg[1]]
    if type(arg) is tuple and len(arg) == 2 and arg[0] == "@other":
        raise AssertionError(f"a node's arguments hold a {arg[1]}, which the traced program never had")
    if type(arg) in (tuple, list):
        return type(arg)(_value(a, env) for a in arg)
    if type(arg) is dict:
        return {k: _value(v, env) for k, v in arg.items()}
    return arg


def run_nodes(nodes, inputs, constants):
    """The outputs of a graph given as data: placeholders take ``inputs`` in order, the original constants
    ``constants`` (id -> value, the judge's), a new constant the value that came with it."""
    env, feed = {}, iter(inputs)
    for node in nodes:
        if node["op"] == "placeholder":
            env[node["id"]] = np.array(next(feed), copy=True)
        elif node["op"] == "constant":
            value = constants.get(node["id"], node["value"])
            env[node["id"]] = np.array(value, copy=True) if isinstance(value, np.ndarray) else value
        elif node["op"] == "call":
            fn = TARGETS.get(node["target"])
            expect(fn is not None, f"a call of {node['target']!r}, which the graph never had")
            env[node["id"]] = fn(*_value(node["args"], env), **_value(node["kwargs"], env))
        elif node["op"] == "output":
            return [_value(a, env) for a in node["args"]]
    raise AssertionError("the output node is gone")


def built(recipe):
    """The judge's own copy of the recipe's graph, as data, with its inputs and constants."""
    graph = cases.compile_graph(recipe)
    nodes = cases.graph_data(graph, {id(n): i for i, n in enumerate(graph.nodes)})
    inputs = [n.value.copy() for n in graph.nodes if n.op == "placeholder"]
    constants = {d["id"]: d["value"] for d in nodes if d["op"] == "constant"}
    return graph, nodes, inputs, constants


def expect_same_program(what, before, after, inputs, constants, seed=0):
    """The graph after the pass computes what the graph before it does: on the traced inputs and on fresh ones
    (a call folded that read a placeholder only gives the traced value)."""
    rng = np.random.default_rng(seed)
    fresh = [rng.uniform(-1, 1, np.shape(x)).astype(np.asarray(x).dtype) for x in inputs]
    for label, feed in (("", inputs), (" (on other inputs than the traced ones)", fresh)):
        want = run_nodes(before, feed, constants)
        try:
            got = run_nodes(after, feed, constants)
        except AssertionError as err:
            raise AssertionError(f"{what}: {err}") from None
        expect(len(want) == len(got), f"{what}: the graph now has {len(got)} outputs, not {len(want)}")
        for k, (b, a) in enumerate(zip(want, got)):
            expect(np.asarray(a).dtype == np.asarray(b).dtype and np.array_equal(a, b),
                   f"{what}: output {k} changed{label}: {b!r} before your pass, {a!r} after")


def run_pass(student, name, recipe, what, **extra):
    """The student's pass on the recipe's graph: ``(reply, the judge's graph data, inputs, constants)``."""
    graph, before, inputs, constants = built(recipe)
    got = student.call(name, {"recipe": "compile_graph", "what": what, **recipe, **extra}, observe="graph_pass",
                       what=what, timeout=30)
    expect(got["count"] is not None, f"{what}: return the number of nodes, got a {got['returned']}")
    after = got["nodes"]
    expect(after and after[-1]["op"] == "output", f"{what}: the output node must stay last")
    expect_same_program(what, before, after, inputs, constants, seed=len(before))
    return got, before, after


def _is_ref(arg):
    return type(arg) is tuple and len(arg) == 2 and arg[0] == "@node"


def _inputs_of(node):
    found = []

    def walk(a):
        if _is_ref(a):
            found.append(a[1])
        elif type(a) in (tuple, list):
            for x in a:
                walk(x)
        elif type(a) is dict:
            for x in a.values():
                walk(x)
    walk((node["args"], node["kwargs"]))
    return found


def repeats(nodes):
    """Pairs of calls with the same target, arguments and keyword arguments, neither written into, no write in
    between into memory they read: what common-subexpression elimination must leave none of."""
    by_id = {n["id"]: n for n in nodes}
    written = {by_id[n["mutates"]]["storage"] for n in nodes if n["mutates"] is not None and n["mutates"] in by_id}
    found = []
    for i, first in enumerate(nodes):
        if first["op"] != "call" or first["mutates"] is not None or first["storage"] in written:
            continue
        touched = {first["storage"]} | {by_id[k]["storage"] for k in _inputs_of(first) if k in by_id}
        for later in nodes[i + 1:]:
            if later["mutates"] is not None and by_id.get(later["mutates"], {}).get("storage") in touched:
                break
            if later["op"] == "call" and later["mutates"] is None and later["storage"] not in written and \
                    later["target"] == first["target"] and _same(later["args"], first["args"]) and \
                    _same(later["kwargs"], first["kwargs"]):
                found.append((first["id"], later["id"]))
    return found


def _same(a, b):
    if type(a) is not type(b):
        return False
    if type(a) in (tuple, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if type(a) is dict:
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and bool(np.array_equal(a, b))
    return bool(a == b)


def writes(nodes):
    return sum(n["mutates"] is not None for n in nodes)


def expect_real_steps(student, name, fewer):
    """A compiled SGD step and a compiled Adam step with the pass: the same parameters as eager (the judge's)."""
    for optimizer in ("SGD", "Adam"):
        got = student.call(name, {"recipe": "compiled_step", "optimizer": optimizer}, observe="compiled_params",
                           what=f"a compiled {optimizer} step with your pass", timeout=60)
        expect(not got["with"]["code_replaced"], f"{optimizer}: your pass replaced the graph's python_code")
        eager = cases.compiled_params(optimizer, None)["params"]
        for k, (a, b) in enumerate(zip(got["with"]["params"], eager)):
            expect(np.array_equal(a, b), f"{optimizer}: with your pass, parameter {k} after 4 steps differs from "
                                         "eager mode's")
        if fewer:
            expect(got["with"]["calls"] < got["without"]["calls"], f"{optimizer}: the step repeats calls (1 + exp "
                   f"in sigmoid); {got['without']['calls']} calls without your pass, {got['with']['calls']} with it")


# ---- exercise: common-subexpression elimination -----------------------------------------------------------------

CSE = "eliminate_common_subexpressions"


@exercise("07b_compile:cse")
def cse(student):
    run_pass(student, CSE, {"graph": "ints"}, "your pass on a * 2, a * 2.0, a == 1, a == True, a == 1.0 (a: int64)")
    run_pass(student, CSE, {"graph": "kwargs"}, "your pass on np.round(x, decimals=1) and np.round(x, decimals=2) "
                                                "(calls that differ only in a keyword argument)")
    recipes = [({"graph": "random", "seed": 100, "n_ops": 6, "writes": False}, "a random graph without writes")]
    recipes += [({"graph": "random", "seed": seed}, f"random graph {seed}") for seed in range(40)]
    for recipe, label in recipes:
        what = f"your pass on {label}"
        got, before, after = run_pass(student, CSE, recipe, what)
        removed = len(before) - len(after)
        expect(got["count"] == removed, f"{what}: it returned {got['count']} but removed {removed} nodes")
        expect(not repeats(after), f"{what}: these calls still compute the same value: {repeats(after)}")
        expect(writes(after) == writes(before), f"{what}: a node that writes was removed")
    got, _, _ = run_pass(student, CSE, {"graph": "random", "seed": 7}, "your pass on random graph 7", twice=True)
    expect(got["again"] == 0, "a second run of your pass still found repeats: merge every repeat in one run")
    expect_real_steps(student, CSE, fewer=True)


# ---- exercise: constant folding ----------------------------------------------------------------------------------

def foldable(nodes):
    by_id = {n["id"]: n for n in nodes}
    written = {by_id[n["mutates"]]["storage"] for n in nodes if n["mutates"] is not None and n["mutates"] in by_id}
    return [n["id"] for n in nodes if n["op"] == "call" and n["mutates"] is None and n["storage"] not in written
            and all(k in by_id and by_id[k]["op"] == "constant" and by_id[k]["storage"] not in written
                    for k in _inputs_of(n))]


def expect_folded(what, got, before, after):
    calls = lambda nodes: sum(n["op"] == "call" for n in nodes)  # noqa: E731
    folded = calls(before) - calls(after)
    expect(got["count"] == folded, f"{what}: it returned {got['count']} but {folded} calls were replaced")
    expect(not foldable(after), f"{what}: calls that read only constants were not folded")
    seen = set()
    for node in after:
        expect(all(k in seen for k in _inputs_of(node)), f"{what}: a node reads a node that is not in graph.nodes "
                                                          "before it")
        seen.add(node["id"])


@exercise("07b_compile:fold")
def fold(student):
    what = "your pass on np.concatenate((x, c)) and np.concatenate((c, d)) (Nodes inside a tuple argument)"
    got, before, after = run_pass(student, "fold_constants", {"graph": "nested"}, what)
    expect_folded(what, got, before, after)
    for seed in range(40):
        what = f"your pass on random graph {seed}"
        got, before, after = run_pass(student, "fold_constants", {"graph": "random", "seed": seed}, what)
        expect_folded(what, got, before, after)
    expect_real_steps(student, "fold_constants", fewer=False)


# ---- exercise: dead nodes -----------------------------------------------------------------------------------------

def reference_dead(recipe):
    """The positions of the nodes chibigrad's own dead-code elimination removes, on the judge's copy."""
    graph = cases.compile_graph(recipe)
    copy = Graph()
    copy.nodes = list(graph.nodes)
    passes.eliminate_dead_code(copy)
    kept = {id(n) for n in copy.nodes}
    return [i for i, n in enumerate(graph.nodes) if id(n) not in kept], graph


@exercise("07b_compile:dead_nodes", forbids=("eliminate_dead_code",), no_recursion=True)
def dead_nodes(student):
    recipes = [({"graph": "random", "seed": seed}, f"random graph {seed}") for seed in range(30)]
    recipes += [({"graph": "random", "seed": 3, "check": 5}, "a graph with a data check"),
                ({"graph": "chain", "n": 20_000}, "a chain of 20,000 calls"),
                ({"graph": "step", "optimizer": "SGD"}, "a traced SGD step"),
                ({"graph": "step", "optimizer": "Adam"}, "a traced Adam step")]
    for recipe, label in recipes:
        what = f"dead_nodes on {label}"
        expected, graph = reference_dead(recipe)
        got = student.call("dead_nodes", {"recipe": "compile_graph", **recipe, "pass": "list"}, observe="graph_pass",
                           what=what, timeout=30)
        expect(got["unchanged"], f"{what}: dead_nodes changed the graph")
        expect(got["type"] == "list" and -1 not in got["ids"], f"{what}: return a list of the graph's Nodes")
        names = lambda ids: [graph.nodes[i].name for i in ids]  # noqa: E731
        expect(got["ids"] == expected, f"{what}: expected the dead nodes {names(expected)}, got {names(got['ids'])}")
