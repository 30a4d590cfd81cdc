"""Hidden checks of 01b_engine (a small engine from scratch), run by the judge.

Graphs are programs (``cases.program``) built in the student process with the setup cell's classes; the
judge knows their structure from the program alone and their gradients from chibigrad's engine.
"""
import numpy as np

import chibigrad as torch

from .a02_backward import SUM_TO_CASES, _numpy_sum_to
from .. import cases
from ..judge import exercise, expect, expect_array

DEEP = 25_000
FREED = "Trying to backward through the graph a second time: this node's saved values were freed"
SMALL = (  # (what, leaves, ops): value i is leaf i, then op i - len(leaves)
    ("a leaf's own node", [(0.5, True)], []),
    ("x * x", [(0.5, True)], [("mul", 0, 0, 0.0)]),
    ("y = a * a + a, a = x.tanh()", [(0.5, True)], [("tanh", 0, -1, 0.0), ("mul", 1, 1, 0.0), ("add", 2, 1, 0.0)]),
)


def small(what, leaves, ops, **extra):
    return {"recipe": "ops", "what": what, "leaves": [(np.asarray(v, dtype=np.float64), r) for v, r in leaves],
            "ops": ops, **extra}


def chibigrad_run(case):
    """The case's program on chibigrad: ``(output, leaves that require grad)``."""
    prog = cases.program(case)
    values = cases.run(prog, lambda a, r: torch.tensor(a, requires_grad=r), cases.apply_op)
    return values[-1], [v for v, (_, r) in zip(values, prog["leaves"]) if r]


# ---- exercise 1 ------------------------------------------------------------------------------------------------

def expect_order(got, case, what):
    """``got`` (node ids) lists every node reachable from the output once, root first, each before the nodes
    it sends a gradient to."""
    prog = cases.program(case)
    edges = cases.node_edges(prog)
    root = len(prog["leaves"]) + len(prog["ops"]) - 1
    reachable, todo = {root}, [root]
    while todo:
        for child in edges[todo.pop()]:
            if child is not None and child not in reachable:
                reachable.add(child)
                todo.append(child)
    expect(got["type"] == "list", f"{what}: returned a {got['type']}, expected a list of nodes")
    ids = got["ids"]
    expect(-1 not in ids, f"{what}: the list holds something that is not a node of the graph")
    expect(len(ids) == len(set(ids)), f"{what}: a node appears twice; list every node once")
    expect(len(ids) == len(reachable), f"{what}: {len(ids)} nodes, expected the {len(reachable)} reachable ones")
    expect(ids[0] == root, f"{what}: the root must come first")
    position = {node: i for i, node in enumerate(ids)}
    for node in ids:
        for child in edges[node]:
            if child is not None:
                expect(position.get(child, -1) > position[node], f"{what}: a node comes before a node that sends "
                       "it a gradient (run a node only when its count reaches zero)")


@exercise("01b_engine:backward_order", no_recursion=True)
def backward_order(student):
    graphs = [small(*c, **{"pass": "root"}) for c in SMALL]
    graphs.append({"recipe": "squarings", "k": 14, "pass": "root"})
    graphs += [{"recipe": "random_graph", "seed": seed, "n_ops": 30, "pass": "root"} for seed in range(8)]
    graphs.append({"recipe": "chain", "n": DEEP, "pass": "root"})
    for case in graphs:
        what = f"backward_order on {student_terms(case)}"
        expect_order(student.call("backward_order", case, observe="node_ids", timeout=30), case, what)


def student_terms(case):
    return case["what"] if case["recipe"] == "ops" else {
        "random_graph": lambda: f"random graph (seed {case.get('seed')})",
        "chain": lambda: f"a chain of {case.get('n', 0):,} products",
        "squarings": lambda: f"{case.get('k')} squarings ({2 ** case.get('k', 0):,} paths)"}[case["recipe"]]()


# ---- exercise 2 ------------------------------------------------------------------------------------------------

@exercise("01b_engine:accumulate")
def accumulate(student):
    rng = np.random.default_rng(0)
    for big, small_shape in SUM_TO_CASES:
        g = rng.standard_normal(big)
        what = f"accumulate(buffers, node, grad of shape {big}, {small_shape})"
        got = student.call("accumulate", {"recipe": "accumulate", "calls": [(g, "node", small_shape)]},
                           observe="buffers", what=what)
        expect(got["node"] is not None, f"{what} put nothing in buffers[node]")
        expect_array(got["node"], _numpy_sum_to(g, small_shape), f"accumulate of a grad of shape {big} to "
                                                                  f"{small_shape}")
        first = rng.standard_normal(small_shape)
        what = f"accumulate into an existing buffer (grad {big} to {small_shape})"
        got = student.call("accumulate", {"recipe": "accumulate", "first": first,
                                          "calls": [(g, "node", small_shape)]}, observe="buffers", what=what)
        expect_array(got["node"], first + _numpy_sum_to(g, small_shape),
                     f"accumulate of a grad of shape {big} into an existing buffer of shape {small_shape}")
        expect(got["first_unchanged"], f"{what} changed the array that was in the buffer in place; another "
                                       "buffer or a leaf's .grad may be that array")
        expect_array(got["other"], first, "accumulate changed another node's buffer")
    shared = rng.standard_normal((2, 3))
    calls = [(shared, "node", (2, 3)), (shared, "other", (2, 3)), (shared, "node", (2, 3)), (shared, "other", (1, 3))]
    got = student.call("accumulate", {"recipe": "accumulate", "calls": calls, "shared": True}, observe="buffers",
                       what="accumulate of one array into several buffers")
    expect(got["grads_unchanged"], "accumulate changed the incoming gradient in place: AddBackward0 hands the "
                                   "same array to both inputs, so the other one would see the change")
    expect_array(got["node"], 2 * shared, "one array accumulated twice into a buffer")


# ---- exercise 3 ------------------------------------------------------------------------------------------------

DIV_PAIRS = (((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3)), ((2, 1), (1, 3)), ((), (2, 2)), ((4,), ()))
MATMUL_SHAPES = (((3, 4), (4, 2)), ((1, 5), (5, 1)), ((2, 2), (2, 2)), ((5, 1), (1, 3)))


def expect_grads(what, got, arrays, expected):
    expect(isinstance(got, tuple), f"{what}: must return a tuple (one gradient per input), got {type(got).__name__}")
    expect(len(got) == len(arrays), f"{what}: {len(got)} gradients for {len(arrays)} inputs")
    for k, (g, a, e) in enumerate(zip(got, arrays, expected)):
        shape = np.shape(a)
        try:
            summed = _numpy_sum_to(np.asarray(g, dtype=np.float64), shape)
        except (ValueError, TypeError):
            raise AssertionError(f"{what}: the gradient for input {k} has shape {np.shape(g)}, which is neither the "
                                 f"output's shape nor the input's {shape}") from None
        expect(summed.shape == shape, f"{what}: the gradient for input {k} has shape {np.shape(g)}, which does not "
                                      f"sum back to the input's {shape}")
        expect_array(summed, e.numpy(), f"{what}: gradient for input {k} (shape {shape}), summed to its shape")


def formula_case(name, fn, g, arrays, student, call_args):
    tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
    expected = torch.autograd.grad(fn(*tensors), tensors, torch.tensor(g))
    got = student.call(name, {"recipe": "args", "args": call_args}, what=f"{name} on {describe_shapes(arrays)}")
    expect_grads(f"{name} on {describe_shapes(arrays)}", got, arrays, expected)


def describe_shapes(arrays):
    return "shapes " + " and ".join(str(np.shape(a)) for a in arrays)


@exercise("01b_engine:formulas")
def formulas(student):
    rng = np.random.default_rng(3)
    for sa, sb in DIV_PAIRS:
        a, b = rng.uniform(0.5, 2.0, sa) * rng.choice([-1, 1], sa), rng.uniform(0.5, 2.0, sb)
        g = rng.standard_normal(np.broadcast_shapes(sa, sb))
        formula_case("div_backward", lambda x, y: x / y, g, (a, b), student, [g, a, b])
    for shape in ((), (3,), (2, 3)):
        x, g = rng.standard_normal(shape), rng.standard_normal(shape)
        formula_case("exp_backward", lambda t: t.exp(), g, (x,), student, [g, np.exp(x)])
    for sa, sb in MATMUL_SHAPES:
        a, b = rng.standard_normal(sa), rng.standard_normal(sb)
        g = rng.standard_normal((sa[0], sb[1]))
        formula_case("matmul_backward", lambda x, y: x @ y, g, (a, b), student, [g, a, b])


# ---- exercise 4 ------------------------------------------------------------------------------------------------

def expect_leaf_grads(what, got, case, grad_scale=1.0):
    out, leaves = chibigrad_run(case)
    grad = np.ones(out.shape) if case.get("grad_ones") or "grad_seed" not in case else \
        cases.grad_for(tuple(out.shape), case["grad_seed"])
    expected = torch.autograd.grad(out, leaves, torch.tensor(grad_scale * grad), allow_unused=True)
    for k, (g, e, leaf) in enumerate(zip(got["grads"], expected, leaves)):
        if e is None:
            expect(g is None, f"{what}: leaf {k} does not reach the output, its .grad must stay None")
        else:
            expect_array(g, e.numpy(), f"{what}: leaf {k}'s grad (shape {tuple(leaf.shape)})", tol=1e-6)


@exercise("01b_engine:backward", no_recursion=True)
def backward(student):
    case = small("backward on (xy + x)^2 at x = 2, y = 3", [(2.0, True), (3.0, True)],
                 [("mul", 0, 1, 0.0), ("add", 2, 0, 0.0), ("mul", 3, 3, 0.0)])
    got = student.call("backward", case, observe="grads", what=case["what"])
    expect_array(got["grads"][0], 64.0, "(xy + x)^2 at x = 2, y = 3: x.grad")
    expect_array(got["grads"][1], 32.0, "(xy + x)^2 at x = 2, y = 3: y.grad")
    for seed in range(10):
        what = f"backward on random graph (seed {seed})"
        case = {"recipe": "random_graph", "seed": seed, "grad_seed": 100 + seed}
        got = student.call("backward", case, observe="grads", what=what)
        expect_leaf_grads(what, got, case)
        expect(got["freed"], f"{what}: a node that saved values still holds them; set node.saved = None once it ran")
        if got["had_saved"]:
            error, message = got["again"]
            expect(error, f"a second backward through random graph (seed {seed}) worked: its saved values should "
                          "have been freed")
            expect(error == "RuntimeError" and message == FREED, f"a second backward on random graph (seed {seed}) "
                   f"raised {error}: {message}; expected Node.apply's RuntimeError")
    for seed in range(10, 14):
        what = f"two backward passes with retain_graph=True (seed {seed}): gradients add up"
        case = {"recipe": "random_graph", "seed": seed, "grad_seed": 100 + seed, "retain_graph": True, "times": 2}
        expect_leaf_grads(what, student.call("backward", case, observe="grads", what=what), case, grad_scale=2.0)
    case = small("backward(p + q, ones, retain_graph=True) three times", [([1.0, 2.0], True), ([3.0, 4.0], True)],
                 [("add", 0, 1, 0.0)], grad_ones=True, retain_graph=True, times=3)
    got = student.call("backward", case, observe="grads", what=case["what"])
    expect_array(got["grads"][0], [3.0, 3.0], "three backward passes through p + q: p.grad")
    expect_array(got["grads"][1], [3.0, 3.0], "three backward passes through p + q: q.grad (each leaf's .grad its "
                                              "own array)")
    case = small("backward on a leaf", [([1.0, 2.0, 3.0], True)], [])
    expect_array(student.call("backward", case, observe="grads", what=case["what"])["grads"][0], [1.0, 1.0, 1.0],
                 "backward(leaf): leaf.grad")
    got = student.call("backward", {"recipe": "squarings", "k": 20}, observe="grads",
                       what="backward on 20 squarings (a million paths)", timeout=30)
    expect_array(got["grads"][0], 2.0 ** 20, "backward on 20 squarings of x = 1: x.grad")
    got = student.call("backward", {"recipe": "chain", "n": DEEP}, observe="grads",
                       what=f"backward on a chain of {DEEP:,} products", timeout=30)
    expect_array(got["grads"][0], 1.00001 ** DEEP, f"a chain of {DEEP:,} products by 1.00001: x.grad", tol=1e-6)
