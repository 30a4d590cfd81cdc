"""Hidden checks of 02_backward (backward formulas, orderings, the path-sum rule), run by the judge.

Inputs are written out (arrays) or named by number (``cases.order_case_02``, ``cases.path_sum_case_02``) and
built on both sides; the student's Functions run in the student process and come back as values, what their
backward returned and the gradients through the engine. The judge's answers come from numpy and from
chibigrad's own engine on its own copy of each graph.
"""
import numpy as np

import chibigrad as torch
from chibigrad.autograd import engine
from chibigrad.autograd.node import FREED_MESSAGE

from .. import cases
from ..judge import exercise, expect, expect_array

# named cases (partial credit): (name, points, [(shape of the broadcast gradient, shape of the input it goes back to)])
SUM_TO_GROUPS = (("no broadcasting", 1, [((2, 3), (2, 3)), ((), ()), ((4, 1), (4, 1))]),
                 ("broadcast over leading dimensions", 2, [((2, 3), (3,)), ((4, 2, 3), ())]),
                 ("broadcast over size-1 dimensions", 2, [((2, 3), (1, 3)), ((2, 3), (2, 1)), ((2, 3), (1, 1)),
                                                          ((5, 1, 3), (1, 1, 3)), ((3,), (1,))]),
                 ("broadcast over both", 1, [((4, 2, 3), (2, 1)), ((2, 3), (1,)), ((2, 3, 4), (3, 1))]))
SUM_TO_CASES = tuple(shapes for _, _, group in SUM_TO_GROUPS for shapes in group)  # 01b_engine's accumulate too
PAIRS = (((3,), (2, 3)), ((2, 1), (1, 3)), ((), (2, 2)), ((2, 3), (2, 3)), ((4, 1, 3), (2, 1)))  # broadcasting


def _numpy_sum_to(g, shape):
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    dims = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    return g.sum(axis=dims, keepdims=True) if dims else g


@exercise("02_backward:sum_to", forbids=("sum_to_size",))
def sum_to(student):
    rng = np.random.default_rng(0)
    for name, points, shapes in SUM_TO_GROUPS:
        with student.case(name, points):
            for big, small in shapes:
                g, what = rng.standard_normal(big), f"sum_to(grad of shape {big}, {small})"
                got = student.call("sum_to", {"recipe": "case_02", "grad": g, "shape": small}, observe="sum_to",
                                   what=what)
                expect(got["type"] == "Tensor", f"{what}: returned a {got['type']}, expected a Tensor")
                expect_array(got["value"], _numpy_sum_to(g, small), what, tol=1e-6)
    with student.case("stays differentiable"):
        weight = np.array([1.0, 2.0, 3.0])
        got = student.call("sum_to", {"recipe": "case_02", "grad": rng.standard_normal((2, 3)), "shape": (3,),
                                      "weight": weight}, observe="sum_to", what="sum_to on a grad that requires grad")
        expect(got["grad_fn"], "sum_to must use Tensor operations (sum, reshape) so the result stays differentiable: "
                               "the result has no grad_fn")
        expect_array(got["grad"], np.tile(weight, (2, 1)), "the gradient through sum_to(g, (3,))")
    with student.case("keeps float32"):
        got = student.call("sum_to", {"recipe": "case_02", "grad": np.ones((2, 3)), "shape": (1, 3),
                                      "dtype": "float32"}, observe="sum_to", what="sum_to on float32")
        expect(got["dtype"] == str(torch.float32), f"sum_to must keep the dtype: float32 became {got['dtype']}")


def _inputs(shapes, rng):
    """Arrays away from 0 (hypot's kink)."""
    return [np.where(np.abs(a) < 0.2, 0.7, a) for a in (rng.uniform(-1.5, 1.5, s) for s in shapes)]


def expect_function(student, name, arrays, forward, local_grads, extra=(), what=None):
    """``name``.apply on ``arrays`` (+ Python numbers ``extra``): forward values, grad_fn ``<name>Backward``,
    backward's own gradients of the inputs' shapes (None for a number), the engine's gradients, and a second
    backward through the freed graph raising the engine's error."""
    what = what or f"{name}.apply on shapes {tuple(np.shape(a) for a in arrays)}"
    g = np.random.default_rng(1).standard_normal(np.broadcast_shapes(*(np.shape(a) for a in arrays)))
    case = {"recipe": "case_02", "inputs": [*arrays, *extra], "requires_grad": [True] * len(arrays) +
            [None] * len(extra), "grad": g}
    got = student.call(name, case, observe="function", what=what)
    expect(got["type"] == "Tensor", f"{name}.apply must return a Tensor, got {got['type']}")
    expect_array(got["value"], forward(*arrays, *extra), f"{name} forward on {what}")
    expect(got["grad_fn"] == f"{name}Backward", f"{name}.apply's result should have grad_fn {name}Backward, got "
                                                f"{got['grad_fn']}")
    expected = [_numpy_sum_to(d, np.shape(a)) for d, a in zip(local_grads(g, *arrays, *extra), arrays)]
    raw = got["raw"]
    expect(len(raw) == len(arrays) + len(extra), f"{name}.backward returned {len(raw)} gradients for "
                                                  f"{len(arrays) + len(extra)} inputs")
    for k, r in enumerate(raw[len(arrays):], len(arrays)):
        expect(r is None, f"{name}.backward: input {k} is a Python number, its gradient must be None")
    for k, (r, a, e) in enumerate(zip(raw, arrays, expected)):
        expect(r is not None, f"{name}.backward returned None for input {k}, which requires grad")
        if not isinstance(r, np.ndarray):  # ("@other", type name)
            raise AssertionError(f"{name}.backward returned a {r[-1]} for input {k}, expected a Tensor")
        expect(r.shape == np.shape(a), f"{name}.backward: the gradient for input {k} has shape {r.shape} but the "
               f"input has shape {np.shape(a)}; sum it over the dimensions that were broadcast (output shape "
               f"{g.shape})")
        expect_array(r, e, f"{name}.backward, gradient for input {k} ({what})", tol=1e-6)
    for k, (r, e) in enumerate(zip(got["grads"], expected)):
        expect_array(r, e, f"the gradient of input {k} through the engine ({what})", tol=1e-6)
    expect(got["again"] is not None, f"{name}: a second backward through a freed graph worked. Keep what backward "
           "needs with ctx.save_for_backward (and read it back with ctx.saved_tensors): the engine frees saved "
           "tensors after backward, attributes like ctx.a it cannot free.")
    expect(got["again"] == f"RuntimeError: {FREED_MESSAGE}", f"{name}: a second backward raised {got['again']}, "
           "expected the engine's 'Trying to backward through the graph a second time' error")
    return got


@exercise("02_backward:hypot")
def hypot(student):
    rng = np.random.default_rng(2)
    for shapes in PAIRS:
        with student.case(broadcast(shapes)):
            expect_function(student, "Hypot", _inputs(shapes, rng), np.hypot,
                            lambda g, x, y: (g * x / np.hypot(x, y), g * y / np.hypot(x, y)))
    what = "Hypot with a constant second input"
    with student.case("a constant float32 input"):
        got = student.call("Hypot", {"recipe": "case_02", "inputs": [np.array([3.0, -5.0]), np.array([4.0, 12.0])],
                                     "requires_grad": [True, False], "grad": np.array([2.0, -1.0]), "dtype": "float32"},
                           observe="function", what=what)
        expect(got.get("dtype") == str(torch.float32), f"Hypot of float32 inputs should be float32, got "
                                                        f"{got.get('dtype')}")
        expect_array(got["grads"][0], [1.2, 5 / 13], "Hypot(a, constant), grad_output [2, -1]: a.grad", tol=1e-5)


def broadcast(shapes):
    """A case's name: its inputs' shapes, e.g. "broadcast (2, 1) with (1, 3)"."""
    return ("same shapes " if len(set(shapes)) == 1 else "broadcast ") + " with ".join(map(str, shapes))


@exercise("02_backward:lerp")
def lerp(student):
    rng = np.random.default_rng(3)
    forward = lambda s, e, w: s + w * (e - s)  # noqa: E731
    for shapes in [((2, 3), (3,), (2, 1)), ((3,), (3,), ()), ((1, 3), (2, 1), (2, 3)), ((2, 2), (2, 2), (2, 2))]:
        with student.case(broadcast(shapes)):
            expect_function(student, "Lerp", _inputs(shapes, rng), forward,
                            lambda g, s, e, w: (g * (1 - w), g * w, g * (e - s)))
    with student.case("a Python number as weight"):
        for shapes in [((2, 3), (3,)), ((4,), (4,))]:
            expect_function(student, "Lerp", _inputs(shapes, rng), forward, lambda g, s, e, w: (g * (1 - w), g * w),
                            extra=(0.25,), what=f"Lerp.apply with weight 0.25 on shapes {shapes}")
    what = "Lerp with a weight that needs no grad"
    with student.case("an end and a weight that need no grad"):
        got = student.call("Lerp", {"recipe": "case_02", "inputs": [np.array([1.0, 2.0]), np.array([3.0, 6.0]),
                                                                    np.array([0.5, 0.25])],
                                    "requires_grad": [True, False, False], "grad": np.ones(2), "dtype": "float32"},
                           observe="function", what=what)
        expect(got["type"] == "Tensor", f"{what}: Lerp.apply must return a Tensor, got {got['type']}")
        expect_array(got["grads"][0], [0.5, 0.75], "Lerp(start, constant end, constant weight): start.grad",
                     tol=1e-6)


# named cases (partial credit): (name, numbers of cases.order_case_02 / cases.path_sum_case_02)
ORDER_GROUPS = (("small graphs", (0, 1, 2, 3)), ("several roots", (4, 5)), ("random graphs", tuple(range(6, 12))),
                (f"deep graph (a chain of {cases.DEEP_01:,} additions)", (12,)))
PATH_SUM_GROUPS = (("the five-neuron network", (0, 1, 2)), ("small graphs", (3, 4, 5, 6, 7)),
                   ("random graphs", tuple(range(8, 14))),
                   (f"deep graph (a chain of {cases.DEEP_01:,} additions)", (14,)))


@exercise("02_backward:dfs_order", forbids=("topological_order",), no_recursion=True)
def dfs_order(student):
    for name, indices in ORDER_GROUPS:
        with student.case(name):
            for index in indices:
                expect_order(student, index)
    with student.case("backward with dfs_order on random graphs"):
        for seed in range(6):
            outs, leaves, grads = cases.ordered_graphs_02(seed)
            expected = torch.autograd.grad(outs, leaves, grads)
            what = f"backward with dfs_order on random graphs (seed {seed})"
            got = student.call("dfs_order", {"recipe": "case_02", "seed": seed}, observe="ordered_backward",
                               what=what)
            for k, (g, e) in enumerate(zip(got, expected)):
                expect_array(g, e.numpy(), f"{what}: leaf {k}'s grad", tol=1e-6)


def expect_order(student, index):
    """dfs_order on graph ``index``: every reachable node once, each after every node that sends it a gradient."""
    case, roots = cases.order_case_02(index)
    what, ids = f"dfs_order on {case}", cases.node_ids(list(roots))
    got = student.call("dfs_order", {"recipe": "case_02", "case": index}, observe="order", what=what, timeout=30)
    expect(got["type"] == "list" and not got["foreign"], f"{what}: returned a {got['type']}, expected a list "
                                                         "of nodes")
    order = got["ids"]
    expect(-1 not in order, f"{what}: the list holds a node that is not in the graph")
    expect(len(set(order)) == len(order), f"{what}: a node appears twice; list every node once")
    expect(len(order) == len(ids), f"{what}: {len(order)} nodes, expected the {len(ids)} reachable ones")
    position = {node: i for i, node in enumerate(order)}
    for node in cases.nodes_by_id(list(roots)):
        for child, _ in node.next_functions:
            if child is not None and position[ids[id(child)]] < position[ids[id(node)]]:
                raise AssertionError(f"{what}: {child.name()} comes before {node.name()}, which sends it a "
                                     "gradient; the engine would run it before its gradient is complete (a "
                                     "depth-first order lists a node after finishing its children: reverse it)")


@exercise("02_backward:path_sum_grad", no_recursion=True)
def path_sum_grad(student):
    for name, indices in PATH_SUM_GROUPS:
        with student.case(name):
            for index in indices:
                expect_path_sums(student, index)


def expect_path_sums(student, index):
    """path_sum_grad of every leaf of graph ``index`` against the engine's gradient."""
    case, out, leaves = cases.path_sum_case_02(index)
    expected = torch.autograd.grad(out, leaves, torch.ones_like(out), retain_graph=True, allow_unused=True)
    answers = student.call("path_sum_grad", {"recipe": "case_02", "case": index}, observe="path_sums",
                           what=f"path_sum_grad on {case}, for each leaf", timeout=30)
    expect(isinstance(answers, list) and len(answers) == len(leaves) and all(isinstance(a, dict) for a in answers),
           f"path_sum_grad on {case}: the notebook's process answered for other leaves than the graph's")
    for k, (leaf, e, got) in enumerate(zip(leaves, expected, answers)):
        what = f"path_sum_grad on {case}, leaf {k}"
        expect(got["type"] == "Tensor", f"{what}: returned a {got['type']}, expected a Tensor")
        expect_array(got["value"], np.zeros(tuple(leaf.shape)) if e is None else e.numpy(), what, tol=1e-6)
