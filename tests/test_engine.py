"""The backward engine: ordering, each node run once, gradients summed over
every path, accumulation, graph lifetime, a pluggable ordering, depth without
recursion, and gradients that never alias each other or the caller's tensors.
"""
import gc
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import chibigrad as torch
from chibigrad.autograd import engine
from chibigrad.autograd.node import AccumulateGrad

ROOT = Path(__file__).resolve().parent.parent
FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after they have "
         "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
         "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
         "if you need to access saved tensors after calling backward.")


def count_runs(*tensors):
    """Count how often the engine runs each tensor's grad_fn."""
    counts = {}
    for t in tensors:
        node = t.grad_fn
        counts[node] = 0

        def hook(grad_outputs, node=node):
            counts[node] += 1

        node.register_prehook(hook)
    return counts


def dfs_order(roots):
    """A depth-first topological order: reverse post-order of an iterative DFS
    that follows next_functions (a node comes before every node it feeds)."""
    post, seen = [], set()
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, edges = stack[-1]
            for nxt, _ in edges:
                if nxt is not None and nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, iter(nxt.next_functions)))
                    break
            else:
                stack.pop()
                post.append(node)
    return post[::-1]


def diamond_graph():
    x = torch.tensor([0.5, -1.5, 2.0], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]], dtype=torch.float64, requires_grad=True)
    h = (w * x).tanh()
    s = h.sum(0)
    out = (s * x).sum() + (h * h).mean() + s.exp().sum() + (x.sin() * s).sum()
    return out, (x, w)


# ---- order and running each node once ------------------------------------------------------
def test_topological_order_lists_each_node_once_before_the_nodes_it_feeds():
    out, _ = diamond_graph()
    order = engine.topological_order([out.grad_fn])
    assert len(order) == len(set(order)) and order[0] is out.grad_fn
    position = {node: i for i, node in enumerate(order)}
    for node in order:
        for nxt, _ in node.next_functions:
            if nxt is not None:
                assert position[node] < position[nxt]
    assert sum(isinstance(n, AccumulateGrad) for n in order) == 2


def test_each_node_runs_once_and_gradients_from_every_path_add_up():
    x = torch.tensor(1.5, requires_grad=True)
    b = x * 2
    c = b * b + b.exp() + b
    counts = count_runs(b, c)
    c.backward()
    assert list(counts.values()) == [1, 1]
    assert x.grad.item() == pytest.approx(2 * (2 * 3. + np.exp(3.) + 1), rel=1e-6)


def test_exponentially_many_paths_take_linear_work():
    x = torch.tensor(1., requires_grad=True)
    y, nodes = x, []
    for _ in range(40):
        y = y + y
        nodes.append(y)
    counts = count_runs(*nodes)
    y.backward()
    assert set(counts.values()) == {1}
    assert x.grad.item() == 2.0 ** 40


def test_order_of_hooks_is_pytorchs():
    """Recorded under PyTorch (tests/golden/programs/hook_order.py)."""
    order = []
    a = torch.tensor(1., requires_grad=True)
    b = a * 2
    c = a * 3
    d = b.exp()
    e = c + d
    f = b * e
    for name, t in dict(a=a, b=b, c=c, d=d, e=e, f=f).items():
        t.register_hook(lambda g, name=name: order.append(name))
    f.backward()
    assert order == ["f", "e", "d", "c", "b", "a"]


def test_grad_runs_only_the_nodes_that_reach_the_inputs():
    x = torch.tensor(2., requires_grad=True)
    z = torch.tensor(3., requires_grad=True)
    zx = z.exp()
    xs = x * x
    counts = count_runs(zx, xs)
    (g,) = torch.autograd.grad(xs + zx, x)
    assert g.item() == 4. and counts[xs.grad_fn] == 1 and counts[zx.grad_fn] == 0
    assert z.grad is None


# ---- a pluggable ordering ---------------------------------------------------------------
def test_dfs_order_is_a_valid_topological_order():
    out, _ = diamond_graph()
    order = dfs_order([out.grad_fn])
    assert set(order) == set(engine.topological_order([out.grad_fn]))
    position = {node: i for i, node in enumerate(order)}
    assert all(position[n] < position[m] for n in order for m, _ in n.next_functions if m is not None)


def test_use_ordering_with_a_dfs_ordering_gives_the_same_gradients():
    out, (x, w) = diamond_graph()
    out.backward()
    expected = x.grad.numpy().copy(), w.grad.numpy().copy()
    calls = []

    def ordering(roots):
        calls.append(roots)
        return dfs_order(roots)

    out, (x, w) = diamond_graph()
    with engine.use_ordering(ordering):
        out.backward(retain_graph=True)
        (gx,) = torch.autograd.grad(out, x)
    assert len(calls) == 2
    np.testing.assert_allclose(x.grad.numpy(), expected[0], rtol=1e-12)
    np.testing.assert_allclose(w.grad.numpy(), expected[1], rtol=1e-12)
    np.testing.assert_allclose(gx.numpy(), expected[0], rtol=1e-12)
    assert engine._ordering[-1] is engine.topological_order


def test_use_ordering_is_restored_after_an_error():
    x = torch.tensor([1., 2.], requires_grad=True)
    with pytest.raises(RuntimeError):
        with engine.use_ordering(dfs_order):
            (x * 2).backward()
    assert engine._ordering[-1] is engine.topological_order


# ---- accumulation --------------------------------------------------------------------
def test_accumulation_adds_and_never_overwrites():
    x = torch.tensor(1.0, requires_grad=True)
    seen = []
    for i in range(3):
        (x * (i + 1)).backward()
        seen.append(x.grad.item())
    assert seen == [1., 3., 6.]
    (x * 4).backward()
    assert x.grad.item() == 10.


def test_accumulation_after_zero_and_after_none():
    x = torch.tensor([1., 2.], requires_grad=True)
    x.sum().backward()
    x.sum().backward()
    assert x.grad.tolist() == [2., 2.]
    x.grad.zero_()
    assert x.grad.tolist() == [0., 0.]
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3., 3.]
    x.grad = None
    (x * 5).sum().backward()
    assert x.grad.tolist() == [5., 5.]


def test_a_leaf_used_twice_in_one_op():
    x = torch.tensor(3., requires_grad=True)
    (x * x).backward()
    assert x.grad.item() == 6.


def test_grad_dtype_follows_the_leaf():
    x = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)
    (x * 2).sum().backward()
    assert repr(x.grad) == "tensor([2., 2.], dtype=torch.float64)"


# ---- gradients never alias --------------------------------------------------------------
def test_leaves_of_a_sum_get_separate_gradients():
    a = torch.tensor([1., 2.], requires_grad=True)
    b = torch.tensor([3., 4.], requires_grad=True)
    (a + b).sum().backward()
    a.grad.zero_()
    assert a.grad.tolist() == [0., 0.] and b.grad.tolist() == [1., 1.]
    c = torch.tensor([1., 2.], requires_grad=True)
    d = torch.tensor([3., 4.], requires_grad=True)
    (c + d).backward(torch.tensor([1., 1.]))
    d.grad.mul_(5)
    assert c.grad.tolist() == [1., 1.] and d.grad.tolist() == [5., 5.]


class _SameArrayToBoth(torch.autograd.Function):
    """Hands one fresh gradient to both inputs."""

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, grad):
        g = grad * 2
        return g, g


def test_one_fresh_gradient_handed_to_two_leaves_is_not_shared_between_them():
    a = torch.tensor([1., 2.], requires_grad=True)
    b = torch.tensor([3., 4.], requires_grad=True)
    _SameArrayToBoth.apply(a, b).sum().backward()
    a.grad.zero_()
    assert a.grad.tolist() == [0., 0.] and b.grad.tolist() == [2., 2.]


def test_a_gradient_for_an_input_that_needs_none_is_dropped():
    x = torch.tensor([1., 2.], requires_grad=True)
    out = _SameArrayToBoth.apply(x, torch.tensor([3., 4.]))
    grads = engine.call_node(out.grad_fn, [torch.ones(2)])
    assert type(grads) is tuple and grads[1] is None and grads[0].tolist() == [2., 2.]


@pytest.mark.parametrize("make", [
    lambda x: x, lambda x: x + 0, lambda x: x * 1, lambda x: x.view(2), lambda x: x.reshape(1, 2).squeeze(0),
    lambda x: x.clone(), lambda x: x[:],
])
def test_backward_gradient_is_never_aliased_into_dot_grad(make):
    x = torch.tensor([1., 2.], requires_grad=True)
    g = torch.tensor([1., 1.])
    make(x).backward(g)
    x.grad.mul_(5)
    assert g.tolist() == [1., 1.] and x.grad.tolist() == [5., 5.]
    g.add_(1)
    assert x.grad.tolist() == [5., 5.]


def test_a_hook_that_keeps_the_gradient_does_not_alias_dot_grad():
    x = torch.tensor([1., 2.], requires_grad=True)
    kept = []
    x.register_hook(lambda g: kept.append(g))
    (x * 3).sum().backward()
    x.grad.zero_()
    assert kept[0].tolist() == [3., 3.]


def test_a_view_of_a_gradient_someone_else_holds_is_not_aliased_into_dot_grad():
    # x.t().t() hands x a row-major view of its incoming gradient: stored as it is only if
    # nobody else holds that gradient.
    x = torch.ones(2, 3, requires_grad=True)
    g = torch.ones(2, 3)
    x.t().t().backward(g)  # the caller's gradient
    x.grad.mul_(5)
    assert g.tolist() == [[1., 1., 1.]] * 2
    y = torch.ones(2, 3, requires_grad=True)
    twice = y.t().t()
    kept = []
    twice.register_hook(kept.append)  # a hook keeps the gradient
    (twice * 3).sum().backward()
    y.grad.zero_()
    assert kept[0].tolist() == [[3., 3., 3.]] * 2


@pytest.mark.parametrize("kept_first", [True, False])
def test_summing_in_a_buffer_never_changes_a_gradient_someone_holds(kept_first):
    x = torch.ones(2, requires_grad=True)
    y = x * 1
    five = y * 5 if kept_first else None  # the branch recorded first runs last
    z = y + 0
    kept = []
    z.register_hook(kept.append)
    if five is None:
        five = y * 5
    (five.sum() + (z * 3).sum()).backward()
    assert kept[0].tolist() == [3., 3.] and x.grad.tolist() == [8., 8.]


def test_the_weight_gradient_of_linear_is_row_major_and_its_own():
    lin = torch.nn.Linear(3, 2)
    lin(torch.ones(4, 3)).sum().backward()
    assert lin.weight.grad.is_contiguous() and lin.weight.grad.tolist() == [[4., 4., 4.]] * 2
    first = lin.weight.grad
    lin(torch.ones(4, 3)).sum().backward()  # accumulates in place
    assert lin.weight.grad is first and first.tolist() == [[8., 8., 8.]] * 2


def test_retained_grad_of_a_non_leaf_is_not_aliased():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x + 0
    y.retain_grad()
    y.sum().backward()
    y.grad.mul_(7)
    assert x.grad.tolist() == [1., 1.]


# ---- graph lifetime -------------------------------------------------------------------
def test_second_backward_through_freed_graph_raises():
    x = torch.tensor(2., requires_grad=True)
    y = x ** 3
    y.backward()
    assert x.grad.item() == 12.
    with pytest.raises(RuntimeError) as err:
        y.backward()
    assert str(err.value) == FREED
    with pytest.raises(RuntimeError) as err:
        torch.autograd.grad(y, x)
    assert str(err.value) == FREED


@pytest.mark.parametrize("make", [lambda x: x * 2, lambda x: x * x, lambda x: (x ** 3).sum(), lambda x: x.exp()])
def test_graphs_that_saved_tensors_cannot_be_walked_twice(make):
    x = torch.tensor(2., requires_grad=True)
    y = make(x)
    y.backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        y.backward()


def test_a_graph_that_saved_nothing_can_be_walked_again():
    x = torch.tensor(2., requires_grad=True)
    y = x + 1
    y.backward()
    y.backward()
    assert x.grad.item() == 2.
    z = (x - 3).sum() + (-x)
    z.backward()
    z.backward()
    assert x.grad.item() == 2.


def test_retain_graph_keeps_saved_tensors_until_the_last_backward():
    x = torch.tensor(2., requires_grad=True)
    y = x * x
    y.backward(retain_graph=True)
    assert not any(released for *_, released in y.grad_fn.saved_tensors_info)
    y.backward()
    assert x.grad.item() == 8.
    assert all(released for *_, released in y.grad_fn.saved_tensors_info)


def test_grad_create_graph_retains_the_graph():
    x = torch.tensor(2., requires_grad=True)
    y = x ** 3
    torch.autograd.grad(y, x, create_graph=True)
    y.backward()
    assert x.grad.item() == 12.


def test_a_failed_backward_leaves_grads_of_unreached_leaves_alone():
    x = torch.tensor([1., 2.], requires_grad=True)
    with pytest.raises(RuntimeError):
        (x * 2).backward(torch.ones(3))
    assert x.grad is None


# ---- depth ---------------------------------------------------------------------------
def test_backward_through_a_100000_node_chain_without_recursion():
    """Run in a subprocess: a recursive engine or a recursive graph destructor
    would die there (RecursionError or a C stack overflow) without taking
    this test session down."""
    code = textwrap.dedent("""
        import gc, sys
        import chibigrad as torch
        sys.setrecursionlimit(1000)
        gc.disable()  # only for speed: full collections would rescan the growing graph
        x = torch.tensor(1.0, requires_grad=True)
        y = x
        for _ in range(100_000):
            y = y + 0.5
        y.backward()
        print(x.grad.item(), y.item())
        del y  # freeing the 100,000-node graph must not recurse either
        gc.enable()
        gc.collect()
        print("freed")
    """)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    grad, value, freed = result.stdout.split()
    assert float(grad) == 1.0 and float(value) == 50001.0 and freed == "freed"


def test_freeing_a_graph_releases_its_nodes():
    x = torch.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(1000):
        y = y.sin()
    import weakref
    node = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert node() is None


class _KeepGradient(torch.autograd.Function):
    """Passes the gradient on, keeping it on ctx."""

    @staticmethod
    def forward(ctx, a):
        return a.clone()

    @staticmethod
    def backward(ctx, grad):
        ctx.kept = grad * 1
        return ctx.kept


def test_a_gradient_someone_kept_is_not_summed_into_in_place():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * 1
    b = (y * 2).sum()
    kept = _KeepGradient.apply(y)  # runs first in backward: its gradient reaches y's buffer first
    (kept.sum() + b).backward()
    assert kept.grad_fn.kept.tolist() == [1., 1.] and x.grad.tolist() == [3., 3.]
