"""Hidden tests of assignment 02_backward: backward formulas, orderings, the path-sum rule."""
import numpy as np

import chibigrad as torch
from chibigrad.autograd import engine
from chibigrad.autograd.node import AccumulateGrad

from . import (DEEP, assert_close, call, deep_chain, diamond_chain, engine_grads, expect, forbidden,
               gradient_check, leaf, nodes_of, random_graph)
from .contract import expect_freed, raw_backward

# (shape of the broadcast gradient, shape of the input it goes back to)
SUM_TO_CASES = (((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 3), (2, 1)), ((4, 2, 3), (2, 1)),
                ((4, 2, 3), ()), ((2, 3), (1, 1)), ((5, 1, 3), (1, 1, 3)), ((3,), (1,)), ((2, 3), (1,)),
                ((), ()), ((4, 1), (4, 1)), ((2, 3, 4), (3, 1)))
# broadcasting pairs of input shapes for the Functions
PAIRS = (((3,), (2, 3)), ((2, 1), (1, 3)), ((), (2, 2)), ((2, 3), (2, 3)), ((4, 1, 3), (2, 1)))


def _numpy_sum_to(g, shape):
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    dims = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    return g.sum(axis=dims, keepdims=True) if dims else g


def check_sum_to(sum_to):
    rng = np.random.default_rng(0)
    with forbidden([torch.Tensor.sum_to_size], "write sum_to yourself: do not call Tensor.sum_to_size"):
        for big, small in SUM_TO_CASES:
            g = torch.tensor(rng.standard_normal(big))
            got = call(f"sum_to(grad of shape {big}, {small})", sum_to, g, small)
            assert_close(got, _numpy_sum_to(g._array, small), f"sum_to(grad of shape {big}, {small})")
        g = torch.tensor(rng.standard_normal((2, 3)), requires_grad=True)
        out = call("sum_to on a grad that requires grad", sum_to, g, (3,))
        expect(out.grad_fn is not None, "sum_to must use Tensor operations (sum, reshape) so the result stays "
                                        "differentiable: the result has no grad_fn")
        (out * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
        assert_close(g.grad, np.tile([1.0, 2.0, 3.0], (2, 1)), "the gradient through sum_to(g, (3,))")
        g32 = torch.ones(2, 3)
        expect(call("sum_to on float32", sum_to, g32, (1, 3)).dtype == torch.float32, "sum_to must keep the dtype")


def _inputs(shapes, rng, dtype=torch.float64, positive=False):
    low = 0.5 if positive else -1.5
    out = []
    for s in shapes:
        data = rng.uniform(low, 1.5, s)
        if not positive:
            data = np.where(np.abs(data) < 0.2, 0.7, data)  # keep away from 0 (hypot's kink)
        out.append(torch.tensor(data, dtype=dtype, requires_grad=True))
    return out


def _check_raw_backward(name, out, inputs, expected):
    """What backward itself returned (before the engine sums to shapes) has the inputs' shapes."""
    g = torch.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))
    raw = raw_backward(f"{name}.backward", out, g)
    expect(len(raw) == len(inputs), f"{name}.backward returned {len(raw)} gradients for {len(inputs)} inputs")
    for k, (x, r, e) in enumerate(zip(inputs, raw, expected(g._array))):
        if e is None:
            expect(r is None, f"{name}.backward: input {k} is a Python number, its gradient must be None "
                              f"(got {type(r).__name__})")
            continue
        expect(r is not None, f"{name}.backward returned None for input {k}, which requires grad")
        expect(tuple(r.shape) == tuple(x.shape),
               f"{name}.backward: the gradient for input {k} has shape {tuple(r.shape)} but the input has shape "
               f"{tuple(x.shape)}; sum it over the dimensions that were broadcast (output shape {tuple(out.shape)})")
        assert_close(r, e, f"{name}.backward, gradient for input {k} (shapes {tuple(x.shape)} of output "
                           f"{tuple(out.shape)})")


def _check_freed(name, make):
    out = make()
    out.sum().backward()
    expect_freed(name, lambda: out.sum().backward(),
                 f"{name}: a second backward through a freed graph worked. Keep what backward needs with "
                 "ctx.save_for_backward (and read it back with ctx.saved_tensors): the engine frees saved tensors "
                 "after backward, attributes like ctx.a it cannot free.")


def check_hypot(Hypot):
    rng = np.random.default_rng(2)
    for shapes in PAIRS:
        a, b = _inputs(shapes, rng)
        out = call(f"Hypot.apply on shapes {shapes}", Hypot.apply, a, b)
        expect(isinstance(out, torch.Tensor), f"Hypot.apply must return a Tensor, got {type(out).__name__}")
        assert_close(out, np.hypot(a._array, b._array), f"Hypot forward on shapes {shapes}")
        expect(out.grad_fn is not None and out.grad_fn.name() == "HypotBackward",
               f"Hypot.apply's result should have grad_fn HypotBackward, got {out.grad_fn}")
        x, y, o = a._array, b._array, np.hypot(a._array, b._array)
        _check_raw_backward("Hypot", out, [a, b], lambda g: [_numpy_sum_to(g * x / o, x.shape),
                                                              _numpy_sum_to(g * y / o, y.shape)])
        gradient_check(f"Hypot on shapes {shapes}", Hypot.apply, [a, b], seed=len(shapes[0]))
    a = torch.tensor([3.0, -5.0], requires_grad=True)
    out = call("Hypot with a constant second input", Hypot.apply, a, torch.tensor([4.0, 12.0]))
    expect(out.dtype == torch.float32, f"Hypot of float32 inputs should be float32, got {out.dtype}")
    out.sum().backward()
    assert_close(a.grad, [0.6, -5 / 13], "Hypot(a, constant): a.grad", rtol=1e-5)
    _check_freed("Hypot", lambda: Hypot.apply(*_inputs([(2,), (2,)], rng)))


def check_lerp(Lerp):
    rng = np.random.default_rng(3)
    cases = [((2, 3), (3,), (2, 1)), ((3,), (3,), ()), ((1, 3), (2, 1), (2, 3)), ((2, 2), (2, 2), (2, 2))]
    for shapes in cases:
        start, end, weight = _inputs(shapes, rng)
        out = call(f"Lerp.apply on shapes {shapes}", Lerp.apply, start, end, weight)
        s, e, w = start._array, end._array, weight._array
        assert_close(out, s + w * (e - s), f"Lerp forward on shapes {shapes}")
        _check_raw_backward("Lerp", out, [start, end, weight],
                            lambda g: [_numpy_sum_to(g * (1 - w), s.shape), _numpy_sum_to(g * w, e.shape),
                                       _numpy_sum_to(g * (e - s), w.shape)])
        gradient_check(f"Lerp on shapes {shapes}", Lerp.apply, [start, end, weight], seed=len(shapes[0]))
    for shapes in [((2, 3), (3,)), ((4,), (4,))]:
        start, end = _inputs(shapes, rng)
        out = call(f"Lerp.apply with weight 0.25 on shapes {shapes}", Lerp.apply, start, end, 0.25)
        s, e = start._array, end._array
        assert_close(out, s + 0.25 * (e - s), f"Lerp forward with weight 0.25 on shapes {shapes}")
        _check_raw_backward("Lerp", out, [start, end, 0.25],
                            lambda g: [_numpy_sum_to(g * 0.75, s.shape), _numpy_sum_to(g * 0.25, e.shape), None])
        gradient_check(f"Lerp with weight 0.25 on shapes {shapes}", lambda a, b: Lerp.apply(a, b, 0.25),
                       [start, end])
    start = torch.tensor([1.0, 2.0], requires_grad=True)
    out = call("Lerp with a weight that needs no grad", Lerp.apply, start, torch.tensor([3.0, 6.0]),
               torch.tensor([0.5, 0.25]))
    out.sum().backward()
    assert_close(start.grad, [0.5, 0.75], "Lerp(start, constant end, constant weight): start.grad")
    _check_freed("Lerp", lambda: Lerp.apply(*_inputs([(2,), (2,), (2,)], rng)))


ORDER_YOURSELF = ("write the depth-first ordering yourself: do not call the engine's topological_order or "
                  "_count_dependencies (they count dependencies; this exercise is the other way)")


def _check_order(what, order, roots):
    expected = engine.topological_order(roots)
    expect(isinstance(order, list), f"{what}: returned a {type(order).__name__}, expected a list of nodes")
    position = {}
    for i, node in enumerate(order):
        expect(node not in position, f"{what}: {node.name()} appears twice; list every node once")
        position[node] = i
    missing = [n.name() for n in expected if n not in position]
    expect(not missing, f"{what}: missing nodes {missing[:5]}{'...' if len(missing) > 5 else ''}")
    expect(len(order) == len(expected), f"{what}: {len(order)} nodes, but only {len(expected)} are reachable")
    for node in order:
        for child, _ in node.next_functions:
            if child is not None and position[child] < position[node]:
                raise AssertionError(f"{what}: {child.name()} comes before {node.name()}, which sends it a "
                                     "gradient; the engine would run it before its gradient is complete (a "
                                     "depth-first order lists a node after finishing its children: reverse it)")


def _order_cases():
    x = leaf(0.5)
    yield "x * 2", [(x * 2).grad_fn]
    yield "a leaf's own node (x.backward() on a leaf)", [x._accumulator()]
    x = leaf(0.3)
    a = x.sin()
    yield "a = x.sin(); y = a * a.cos() + a", [(a * a.cos() + a).grad_fn]
    yield "8 diamonds in a row", [diamond_chain(8)[1].grad_fn]
    x = leaf(0.4)
    shared = x.tanh() * x
    y1, y2 = shared.sin(), (shared * 3).cos()
    yield "two roots sharing a subgraph", [y1.grad_fn, y2.grad_fn]
    yield "the same root twice", [y1.grad_fn, y1.grad_fn]
    for seed in range(6):
        yield f"random graph (seed {seed})", [random_graph(seed, n_ops=40)[0].grad_fn]
    yield f"a chain of {DEEP} additions", [deep_chain()[1].grad_fn]


def check_dfs_order(dfs_order):
    with forbidden([engine.topological_order, engine._count_dependencies], ORDER_YOURSELF):
        results = [(case, roots, call(f"dfs_order on {case}", dfs_order, roots)) for case, roots in _order_cases()]
    for case, roots, order in results:
        _check_order(f"dfs_order on {case}", order, roots)
    shapes = ((2, 3), (3,), (1, 3), (2, 1), ())
    for seed in range(6):
        outs = [random_graph(seed * 10 + k, n_ops=30, shapes=shapes, reductions=True)[0] for k in range(2)]
        leaves = list({id(n.variable): n.variable for n in nodes_of(*outs) if isinstance(n, AccumulateGrad)}.values())
        grads = [torch.tensor(np.random.default_rng(seed).standard_normal(tuple(o.shape))) for o in outs]
        expected = torch.autograd.grad(outs, leaves, grads, retain_graph=True)
        for t in leaves:
            t.grad = None
        with engine.use_ordering(dfs_order):
            call(f"backward with dfs_order on random graphs (seed {seed})", torch.autograd.backward, outs, grads)
        for k, (t, e) in enumerate(zip(leaves, expected)):
            assert_close(t.grad, e._array, f"backward with dfs_order on random graphs (seed {seed}): leaf {k}'s grad")


def _five_neurons(seed):
    rng = np.random.default_rng(seed)
    a, w1, w2, w3, w4 = [torch.tensor(rng.standard_normal((3, 3)), requires_grad=True) for _ in range(5)]
    b = w1 * a
    c = w2 * a
    d = w3 * b + w4 * c
    return 10 - d, [a, w1, w2, w3, w4]


NO_ENGINE = ("compute the gradient by the path-sum rule yourself: do not call backward or autograd.grad "
             "(call_node for the local derivatives is fine)")


def _path_sum_case(path_sum_grad, case, output, leaves):
    expected = engine_grads(output, leaves)
    for k, leaf_ in enumerate(leaves):
        with forbidden([engine.execute], NO_ENGINE):
            got = call(f"path_sum_grad on {case}, leaf {k}", path_sum_grad, output, leaf_)
        want = np.zeros(tuple(leaf_.shape)) if expected[k] is None else expected[k]._array
        assert_close(got, want, f"path_sum_grad on {case}, leaf {k}")


def check_path_sum_grad(path_sum_grad):
    for seed in range(3):
        _path_sum_case(path_sum_grad, f"the five-neuron network (seed {seed})", *_five_neurons(seed))
    x = leaf(1.5)
    _path_sum_case(path_sum_grad, "y = x * x (two edges from one node to x)", x * x, [x])
    _path_sum_case(path_sum_grad, "y = x * x * x", x * x * x, [x])
    x1, x2 = leaf(1.5), leaf(1.5)  # a leaf is matched by identity (is), not by value
    _path_sum_case(path_sum_grad, "y = x1 * x2 + x1 with two different leaves that hold equal values",
                   x1 * x2 + x1, [x1, x2])
    x, y = diamond_chain(8)
    _path_sum_case(path_sum_grad, "8 diamonds in a row (256 paths)", y, [x])
    other = leaf(2.0)
    _path_sum_case(path_sum_grad, "a leaf the output does not depend on (expect zeros)", x.sin() * 2, [other])
    for seed in range(6):
        out, leaves = random_graph(seed, n_ops=25, shapes=((2, 2),))
        _path_sum_case(path_sum_grad, f"random graph of (2, 2) tensors (seed {seed})", out, leaves)
    x, y = deep_chain()
    with forbidden([engine.execute], NO_ENGINE):
        got = call(f"path_sum_grad on a chain of {DEEP} additions", path_sum_grad, y, x)
    assert_close(got, 1.0, f"path_sum_grad on a chain of {DEEP} additions")
