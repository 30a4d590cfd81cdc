"""Hidden tests of assignment 01b_engine: a small engine built from scratch, graded against chibigrad's engine on
random graphs (shared subexpressions, constants, broadcasting) and on a deep chain.

The notebook's setup cell defines the small engine's data structures (Tensor, Node, Leaf); the checks build their
graphs with those classes (see ``small_engine``).
"""
import sys

import numpy as np

import chibigrad as torch
from chibigrad.autograd import engine

from . import DEEP, call, expect
from .a02_backward import SUM_TO_CASES, _numpy_sum_to

def small_engine(answer):
    """The notebook's ``Tensor`` class and ``FREED`` message, from the namespace ``answer`` was defined in.

    The student's code recognises leaves with the notebook's own ``Leaf`` (``isinstance``), so the graphs
    must be built with the notebook's classes. They sit in a locked cell; a changed class cannot help a wrong
    answer, since every result is compared with chibigrad's (forward values included)."""
    namespace = getattr(answer, "__globals__", None) or vars(sys.modules["__main__"])
    expect("Tensor" in namespace and "FREED" in namespace,
           "the setup cell's Tensor and FREED are missing: run the notebook's cells in order")
    return namespace["Tensor"], namespace["FREED"]

SHAPES = ((2, 3), (3,), (1, 3), (2, 1), ())  # broadcast together: every result is (2, 3), (3,), (1, 3), (2, 1) or ()


def twin_graph(Tensor, seed, n_ops=25, shapes=SHAPES):
    """One random program run twice: on this engine's Tensors and on chibigrad's (float64).
    Returns ``(out, leaves, cg_out, cg_leaves)``; values are reused often (shared subexpressions), one
    constant needs no gradient, and binary results go through tanh to stay near 1."""
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(4):
        data = rng.uniform(0.5, 1.5, shapes[rng.integers(len(shapes))])
        pairs.append((Tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)))
    leaves = list(pairs)
    data = rng.uniform(0.5, 1.5, shapes[0])
    pairs.append((Tensor(data), torch.tensor(data)))
    for _ in range(n_ops):
        a = pairs[-1 - min(int(rng.geometric(0.4)) - 1, len(pairs) - 1)]
        kind = rng.random()
        if kind < 0.25:
            pairs.append((a[0].tanh(), a[1].tanh()))
        elif kind < 0.32:
            pairs.append((a[0].sum(), a[1].sum()))
        else:
            b = pairs[rng.integers(len(pairs))]
            op = ("__add__", "__sub__", "__mul__")[rng.integers(3)]
            pairs.append((getattr(a[0], op)(b[0]).tanh(), getattr(a[1], op)(b[1]).tanh()))
    out, cg_out = pairs[-1]
    if out.node is None:  # only the constant was used: tie the output to a leaf
        out, cg_out = out + leaves[0][0], cg_out + leaves[0][1]
    expect_array(out.data, cg_out.detach().numpy(), f"the forward value of random graph (seed {seed}) (was a class "
                                                    "of the setup cell changed?)")
    return out, [p[0] for p in leaves], cg_out, [p[1] for p in leaves]


def squarings(Tensor, k, value=1.0):
    """x and y = x squared k times: k MulBackward0 nodes, each with two edges to the one below (2**k paths)."""
    x = Tensor(value, requires_grad=True)
    y = x
    for _ in range(k):
        y = y * y
    return x, y


def deep(Tensor, n=DEEP):
    """x and y = x * 1.00001 * ... (n products): n nodes in a row."""
    x = Tensor(1.0, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.00001
    return x, y


def nodes_of(root):
    """Every node reachable from root (the checks' own walk, to know what was saved before backward)."""
    found, todo = {root}, [root]
    while todo:
        for child in todo.pop().edges:
            if child is not None and child not in found:
                found.add(child)
                todo.append(child)
    return found


def expect_array(got, expected, what, tol=1e-8):
    """``got`` is an array (or number) with ``expected``'s shape and values; the message shows both."""
    expected = np.asarray(expected, dtype=np.float64)
    expect(got is not None, f"{what}: got None, expected {expected.tolist()}")
    try:
        got = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        raise AssertionError(f"{what}: expected an array, got {type(got).__name__}") from None
    expect(got.shape == expected.shape, f"{what}: shape {got.shape}, expected {expected.shape}")
    expect(np.allclose(got, expected, rtol=tol, atol=tol),
           f"{what}: wrong values\n got:\n{got}\n expected:\n{expected}")


# ---- exercise 1 ------------------------------------------------------------------------------------------------

def _check_order(what, order, root, expected_count):
    expect(isinstance(order, list), f"{what}: returned a {type(order).__name__}, expected a list of nodes")
    position = {}
    for i, node in enumerate(order):
        expect(node not in position, f"{what}: {node.name} appears twice; list every node once")
        position[node] = i
    expect(len(order) == expected_count, f"{what}: {len(order)} nodes, expected the {expected_count} reachable ones")
    expect(order[0] is root, f"{what}: the root must come first")
    for node in order:
        for child in node.edges:
            if child is None:
                continue
            expect(child in position, f"{what}: {child.name}, reachable from {node.name}, is missing")
            expect(position[child] > position[node], f"{what}: {child.name} comes before {node.name}, which sends "
                                                     "it a gradient (run a node only when its count reaches zero)")


def check_backward_order(backward_order):
    Tensor, _ = small_engine(backward_order)
    x = Tensor(0.5, requires_grad=True)
    cases = [("a leaf's own node", x.node, 1), ("x * x", (x * x).node, 2)]
    a = x.tanh()
    cases.append(("y = a * a + a, a = x.tanh()", (a * a + a).node, 4))
    sx, sy = squarings(Tensor, 14)
    cases.append(("14 squarings (16,384 paths)", sy.node, 15))
    for seed in range(8):
        out, _, cg_out, _ = twin_graph(Tensor, seed, n_ops=30)
        cases.append((f"random graph (seed {seed})", out.node, len(engine.topological_order([cg_out.grad_fn]))))
    for what, root, count in cases:
        _check_order(f"backward_order on {what}", call(f"backward_order on {what}", backward_order, root), root,
                     count)
    dx, dy = deep(Tensor)
    order = call(f"backward_order on a chain of {DEEP:,} products", backward_order, dy.node)
    _check_order(f"backward_order on a chain of {DEEP:,} products", order, dy.node, DEEP + 1)


# ---- exercise 2 ------------------------------------------------------------------------------------------------

class _Key:
    """A stand-in for a node: accumulate only uses it as a dict key."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<{self.name}>"


def check_accumulate(accumulate):
    rng = np.random.default_rng(0)
    node, other = _Key("node"), _Key("other")
    for big, small in SUM_TO_CASES:
        g = rng.standard_normal(big)
        buffers = {}
        call(f"accumulate(buffers, node, grad of shape {big}, {small})", accumulate, buffers, node, g, small)
        expect(node in buffers, f"accumulate(buffers, node, grad of shape {big}, {small}) put nothing in buffers[node]")
        expect_array(buffers[node], _numpy_sum_to(g, small), f"accumulate of a grad of shape {big} to {small}")
        first = rng.standard_normal(small)
        kept = first.copy()
        buffers = {node: first, other: kept.copy()}
        call(f"accumulate into an existing buffer (grad {big} to {small})", accumulate, buffers, node, g, small)
        expect_array(buffers[node], kept + _numpy_sum_to(g, small),
                     f"accumulate of a grad of shape {big} into an existing buffer of shape {small}")
        expect(np.array_equal(first, kept), f"accumulate (grad {big} to {small}) changed the array that was in the "
                                            "buffer in place; another buffer or a leaf's .grad may be that array")
        expect_array(buffers[other], kept, "accumulate changed another node's buffer")
    shared = rng.standard_normal((2, 3))
    copy = shared.copy()
    buffers = {}
    for target, shape in ((node, (2, 3)), (other, (2, 3)), (node, (2, 3)), (other, (1, 3))):
        call("accumulate of one array into several buffers", accumulate, buffers, target, shared, shape)
    expect(np.array_equal(shared, copy), "accumulate changed the incoming gradient in place: AddBackward0 hands the "
                                         "same array to both inputs, so the other one would see the change")
    expect_array(buffers[node], 2 * copy, "one array accumulated twice into a buffer")


# ---- exercise 3 ------------------------------------------------------------------------------------------------

DIV_PAIRS = (((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3)), ((2, 1), (1, 3)), ((), (2, 2)), ((4,), ()))
MATMUL_SHAPES = (((3, 4), (4, 2)), ((1, 5), (5, 1)), ((2, 2), (2, 2)), ((5, 1), (1, 3)))


def _reference(fn, arrays, grad):
    tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*tensors)
    return out.detach().numpy(), torch.autograd.grad(out, tensors, torch.tensor(grad))


def _check_grads(what, got, arrays, expected):
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


def check_formulas(div_backward, exp_backward, matmul_backward):
    rng = np.random.default_rng(3)
    for sa, sb in DIV_PAIRS:
        a, b = rng.uniform(0.5, 2.0, sa) * rng.choice([-1, 1], sa), rng.uniform(0.5, 2.0, sb)
        g = rng.standard_normal(np.broadcast_shapes(sa, sb))
        tensors = [torch.tensor(v, requires_grad=True) for v in (a, b)]
        expected = torch.autograd.grad(tensors[0] / tensors[1], tensors, torch.tensor(g))
        got = call(f"div_backward on shapes {sa} / {sb}", div_backward, g, a, b)
        _check_grads(f"div_backward on shapes {sa} / {sb}", got, (a, b), expected)
    for shape in ((), (3,), (2, 3)):
        x = rng.standard_normal(shape)
        g = rng.standard_normal(shape)
        t = torch.tensor(x, requires_grad=True)
        expected = torch.autograd.grad(t.exp(), [t], torch.tensor(g))
        got = call(f"exp_backward on shape {shape}", exp_backward, g, np.exp(x))
        _check_grads(f"exp_backward on shape {shape}", got, (x,), expected)
    for sa, sb in MATMUL_SHAPES:
        a, b = rng.standard_normal(sa), rng.standard_normal(sb)
        g = rng.standard_normal((sa[0], sb[1]))
        tensors = [torch.tensor(v, requires_grad=True) for v in (a, b)]
        expected = torch.autograd.grad(tensors[0] @ tensors[1], tensors, torch.tensor(g))
        got = call(f"matmul_backward on {sa} @ {sb}", matmul_backward, g, a, b)
        _check_grads(f"matmul_backward on {sa} @ {sb}", got, (a, b), expected)


# ---- exercise 4 ------------------------------------------------------------------------------------------------

def _compare(what, leaves, cg_leaves, expected):
    for k, (leaf, cg_leaf, e) in enumerate(zip(leaves, cg_leaves, expected)):
        if e is None:
            expect(leaf.grad is None, f"{what}: leaf {k} does not reach the output, its .grad must stay None")
        else:
            expect_array(leaf.grad, e.numpy(), f"{what}: leaf {k}'s grad (shape {tuple(cg_leaf.shape)})")


def check_backward(backward):
    Tensor, FREED = small_engine(backward)
    x, y = Tensor(2.0, requires_grad=True), Tensor(3.0, requires_grad=True)
    w = x * y + x
    call("backward on (xy + x)^2", backward, w * w)
    expect_array(x.grad, 64.0, "(xy + x)^2 at x = 2, y = 3: x.grad")
    expect_array(y.grad, 32.0, "(xy + x)^2 at x = 2, y = 3: y.grad")
    rng = np.random.default_rng(5)
    for seed in range(10):
        out, leaves, cg_out, cg_leaves = twin_graph(Tensor, seed)
        grad = rng.standard_normal(out.shape)
        expected = torch.autograd.grad(cg_out, cg_leaves, torch.tensor(grad), allow_unused=True)
        saving = [n for n in nodes_of(out.node) if n.saved]
        call(f"backward on random graph (seed {seed})", backward, out, grad)
        _compare(f"backward on random graph (seed {seed})", leaves, cg_leaves, expected)
        expect(all(n.saved is None for n in saving), f"backward on random graph (seed {seed}): a node that saved "
                                                     "values still holds them; set node.saved = None once it ran")
        if not saving:
            continue
        try:
            backward(out, grad)
        except Exception as err:
            expect(isinstance(err, RuntimeError) and str(err) == FREED,
                   f"a second backward on random graph (seed {seed}) raised {type(err).__name__}: {err}; expected "
                   f"Node.apply's RuntimeError")
        else:
            raise AssertionError(f"a second backward through random graph (seed {seed}) worked: its saved values "
                                 "should have been freed")
    for seed in range(10, 14):
        out, leaves, cg_out, cg_leaves = twin_graph(Tensor, seed)
        grad = rng.standard_normal(out.shape)
        expected = torch.autograd.grad(cg_out, cg_leaves, torch.tensor(2 * grad), allow_unused=True)
        call(f"backward with retain_graph=True on random graph (seed {seed})", backward, out, grad, True)
        call(f"a second backward with retain_graph=True on random graph (seed {seed})", backward, out, grad, True)
        _compare(f"two backward passes with retain_graph=True (seed {seed}): gradients add up", leaves, cg_leaves,
                 expected)
    p, q = Tensor([1.0, 2.0], requires_grad=True), Tensor([3.0, 4.0], requires_grad=True)
    s = p + q
    for _ in range(3):
        call("backward(p + q, ones, retain_graph=True)", backward, s, np.ones(2), True)
    expect_array(p.grad, [3.0, 3.0], "three backward passes through p + q: p.grad")
    expect_array(q.grad, [3.0, 3.0], "three backward passes through p + q: q.grad (each leaf's .grad its own array)")
    leaf = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    call("backward on a leaf", backward, leaf)
    expect_array(leaf.grad, [1.0, 1.0, 1.0], "backward(leaf): leaf.grad")
    sx, sy = squarings(Tensor, 20)
    call("backward on 20 squarings (a million paths)", backward, sy)
    expect_array(sx.grad, 2.0 ** 20, "backward on 20 squarings of x = 1: x.grad")
    dx, dy = deep(Tensor)
    call(f"backward on a chain of {DEEP:,} products", backward, dy)
    expect_array(dx.grad, 1.00001 ** DEEP, f"a chain of {DEEP:,} products by 1.00001: x.grad", tol=1e-6)
