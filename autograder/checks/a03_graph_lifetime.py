"""Hidden tests of assignment 03_graph_lifetime: saved tensors, freeing, create_graph, graphs kept alive."""
import contextlib
import gc

import numpy as np

import chibigrad as torch
import chibigrad.nn.functional as F
from chibigrad import memory

from . import (BINARY, UNARY, assert_close, call, engine_grads, expect, forbidden, gradient_check, leaf, nodes_of,
               random_graph)
from .contract import expect_freed, raw_backward


@contextlib.contextmanager
def _no_cycle_collection():
    """Memory is measured in here: no automatic cycle collection frees older garbage meanwhile, and objects
    that exist already are left out of explicit collections (``gc.freeze``), which then take milliseconds."""
    enabled = gc.isenabled()
    gc.disable()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


def _second_backward_raises(what, fn):
    expect_freed(what, fn, f"{what}: it worked, but backward should have freed what your Function saved. Save the "
                           "mask with ctx.save_for_backward (the engine frees saved tensors after backward); a "
                           "tensor kept as a ctx attribute is never freed.",
                 raised=lambda err: f"{what}: raised {err!r}, expected PyTorch's 'Trying to backward through the "
                                    "graph a second time ...' error")


# ---- exercise 1: LeakyReLU ------------------------------------------------------------------------------------------

def _leaky(a, slope):
    return np.where(a > 0, a, a * slope)


def _leaky_input(rng, shape, dtype):
    data = rng.uniform(-2, 2, shape)
    data = np.where(np.abs(data) < 0.1, 0.5, data)  # away from the kink for finite differences
    return torch.tensor(data, dtype=dtype, requires_grad=True)


def check_leaky_relu(LeakyReLU):
    with _no_cycle_collection():
        _check_leaky_relu(LeakyReLU)


def _check_leaky_relu(LeakyReLU):
    rng = np.random.default_rng(3)
    cases = [((), 0.01, torch.float64), ((7,), 0.2, torch.float64), ((3, 4), 0.0, torch.float32),
             ((2, 3, 4), -0.5, torch.float64), ((5,), 1.5, torch.float32)]
    for shape, slope, dtype in cases:
        what = f"LeakyReLU.apply(x, {slope}) on a {str(dtype)[6:]} x of shape {shape}"
        x = _leaky_input(rng, shape, dtype)
        before = memory.saved()
        y = call(what, LeakyReLU.apply, x, slope)
        expect(isinstance(y, torch.Tensor), f"{what}: returned a {type(y).__name__}, expected a Tensor")
        expect(y.dtype == dtype, f"{what}: the result is {y.dtype}, expected x's dtype {dtype}")
        assert_close(y, _leaky(x._array.astype(np.float64), slope), f"{what}: forward", rtol=1e-6, atol=1e-7)
        expect(y.grad_fn is not None and y.grad_fn.name() == "LeakyReLUBackward",
               f"{what}: the result's grad_fn should be LeakyReLUBackward, got {y.grad_fn}")
        kept = memory.saved() - before
        expect(kept == x.numel(), f"{what}: {kept} bytes are saved for backward; a boolean mask of {x.numel()} "
                                  f"elements is {x.numel()} bytes (save only the mask, not x or the result)")
        g = torch.tensor(rng.standard_normal(shape), dtype=dtype)
        raw = raw_backward(f"{what}: backward", y, g)
        expect(len(raw) in (1, 2) and (len(raw) == 1 or raw[1] is None),
               f"{what}: backward should return (gradient for x, None for negative_slope), got {len(raw)} values")
        expected = np.where(x._array > 0, g._array, g._array * slope)
        assert_close(raw[0], expected, f"{what}: the gradient backward returns", rtol=1e-6, atol=1e-7)
        del y, raw
        expect(memory.saved() == before, f"{what}: the result was deleted, yet {memory.saved() - before} bytes of "
                                         "saved tensors are still held")
    for shape in [(4,), (2, 3)]:
        x = _leaky_input(rng, shape, torch.float64)
        gradient_check(f"LeakyReLU (negative_slope 0.3) on shape {shape}", lambda t: LeakyReLU.apply(t, 0.3), [x])
    x = torch.tensor([-1.0, 0.0, 0.0, 2.0], dtype=torch.float64, requires_grad=True)
    call("LeakyReLU at exactly 0", LeakyReLU.apply, x, 0.25).sum().backward()
    assert_close(x.grad, [0.25, 0.25, 0.25, 1.0], "LeakyReLU(x, 0.25) at x = [-1, 0, 0, 2]: x.grad (the derivative "
                                                  "at 0 is negative_slope, as in PyTorch: the mask is x > 0)")
    _check_leaky_lifetime(LeakyReLU, rng)
    _check_leaky_deep(LeakyReLU)


def _check_leaky_lifetime(LeakyReLU, rng):
    x = _leaky_input(rng, (1000,), torch.float64)
    g = torch.tensor(rng.standard_normal(1000))
    saved, allocated = memory.saved(), memory.allocated()
    y = call("LeakyReLU on 1000 float64 elements", LeakyReLU.apply, x, 0.1)
    call("backward through LeakyReLU", y.backward, g)
    expect(memory.saved() == saved, f"after backward, {memory.saved() - saved} bytes of saved tensors are still "
                                    "held: let ctx.save_for_backward keep the mask, so the engine frees it")
    extra = memory.allocated() - allocated - y._array.nbytes - x.grad._array.nbytes
    expect(extra <= 0, f"after backward, {extra} bytes that your Function made are still alive besides the result "
                       "and x.grad: a tensor or array kept as a ctx attribute outlives backward (the engine cannot "
                       "free it); save the mask with ctx.save_for_backward")
    _second_backward_raises("a second backward through LeakyReLU", lambda: y.backward(g))
    x.grad = None
    y = call("LeakyReLU", LeakyReLU.apply, x, 0.1)
    call("backward(retain_graph=True) through LeakyReLU", y.backward, g, retain_graph=True)
    first = x.grad.clone()
    call("a second backward after retain_graph=True", y.backward, g)
    assert_close(x.grad, 2 * first._array, "x.grad after two backward calls (the first with retain_graph=True)")
    _second_backward_raises("a third backward (the second one had no retain_graph)", lambda: y.backward(g))
    x = _leaky_input(rng, (3,), torch.float64)
    up = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    y = call("LeakyReLU", LeakyReLU.apply, x, 0.1)
    dx, = call("autograd.grad through LeakyReLU with create_graph=True", torch.autograd.grad, y, x, up,
               create_graph=True)
    expect(dx.requires_grad, "with create_graph=True the gradient should depend on the incoming gradient (it has no "
                             "grad_fn): write backward with tensor operations (torch.where, *), not numpy")


def _check_leaky_deep(LeakyReLU, depth=3000):
    x = torch.tensor([-1.5, -0.5, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
    before = memory.saved()
    what = f"a chain of {depth} steps y = -LeakyReLU.apply(y, -1.0)"
    y = x
    for _ in range(depth):
        y = -call(what, LeakyReLU.apply, y, -1.0)
    assert_close(y, -np.abs(x._array), f"{what}: forward")
    masks = sum(info[2] for n in nodes_of(y) if n.name() == "LeakyReLUBackward" for info in n.saved_tensors_info)
    expect(masks == 4 * depth, f"{what} on 4 elements: {masks} bytes saved by LeakyReLUBackward nodes, expected "
                               f"{4 * depth} (a 4-byte mask each)")
    call(f"backward through {what}", y.backward, torch.ones(4, dtype=torch.float64))
    assert_close(x.grad, np.where(x._array > 0, -1.0, 1.0), f"{what}: x.grad")
    expect(memory.saved() == before, f"{what}: after backward {memory.saved() - before} bytes of saved tensors are "
                                     "still held")


# ---- exercise 2: per_loss_grads ------------------------------------------------------------------------------------

def _mlp_params(rng, sizes):
    return [torch.tensor(rng.standard_normal(s) * 0.5, requires_grad=True) for s in sizes]


def _shared_encoder(rng, heads=2):
    w, b, *head_ws = _mlp_params(rng, [(3, 4), (3,)] + [(k + 1, 3) for k in range(heads)])
    features = F.linear(torch.tensor(rng.standard_normal((5, 4))), w, b).tanh()
    losses = [F.linear(features, hw).pow(2).mean() for hw in head_ws]
    return losses, [w, b, *head_ws]


def _per_loss_cases():
    rng = np.random.default_rng(7)
    yield "two heads on a shared encoder", *_shared_encoder(rng)
    yield "three heads on a shared encoder", *_shared_encoder(rng, heads=3)
    losses, params = _shared_encoder(rng)
    yield "a single loss", losses[:1], params
    losses, params = _shared_encoder(rng)
    yield "the same loss twice", [losses[0], losses[0]], params
    losses, params = _shared_encoder(rng)
    yield "only the encoder's parameters (autograd.grad does not run the heads' weight nodes)", losses, params[:2]
    for seed in range(3):
        out, leaves = random_graph(seed, n_ops=30, shapes=((3,),))
        other = leaf(shape=(3,), rng=rng)
        losses = [(out * other).sum(), out.sin().sum() * 2, (leaves[0] * other).tanh().sum()]
        yield f"three losses on a random graph (seed {seed})", losses, leaves + [other]
    x = leaf(0.1)
    trunk = x
    for _ in range(1500):
        trunk = (trunk * 0.999).sin()
    yield "two losses on a trunk of 3000 nodes (deeper than Python's recursion limit)", [trunk * trunk, trunk.cos()], [x]


def check_per_loss_grads(per_loss_grads):
    for case, losses, params in _per_loss_cases():
        what = f"per_loss_grads on {case}"
        expected = [engine_grads(loss, params) for loss in losses]
        for p in params:
            p.grad = torch.full_like(p, 7.0)
        before = [p.grad for p in params]
        got = call(what, per_loss_grads, losses, params)
        expect(len(got) == len(losses), f"{what}: {len(got)} results for {len(losses)} losses")
        for k, (grads, wanted) in enumerate(zip(got, expected)):
            expect(len(grads) == len(params), f"{what}: loss {k}: {len(grads)} gradients for {len(params)} parameters")
            for i, (g, e, p) in enumerate(zip(grads, wanted, params)):
                expect(g is not None, f"{what}: loss {k}, parameter {i}: None; a parameter the loss does not depend "
                                      "on gets zeros")
                assert_close(g, np.zeros(tuple(p.shape)) if e is None else e._array, f"{what}: loss {k}, parameter {i}")
                expect(g.grad_fn is None, f"{what}: loss {k}, parameter {i}: the gradient has a grad_fn; return plain "
                                          "gradients (no create_graph)")
        for i, (p, b) in enumerate(zip(params, before)):
            expect(p.grad is b and np.all(b._array == 7.0), f"{what}: parameter {i}'s .grad changed; use "
                                                             "torch.autograd.grad, which leaves .grad alone")
            p.grad = None
        held = [n.name() for n in nodes_of(*losses) if any(not info[3] for info in n.saved_tensors_info)]
        expect(not held, f"{what}: when per_loss_grads returns, nodes still hold saved tensors: {held[:4]}"
                         f"{'...' if len(held) > 4 else ''}; free every node of the losses' graphs "
                         "(node.release_saved())")


# ---- exercise 3: hvp -----------------------------------------------------------------------------------------------

def _numerical_hvp(f, params, vectors, eps=1e-5):
    """Central differences of the gradient along v: (g(p + eps v) - g(p - eps v)) / (2 eps), in float64."""
    def gradient(sign):
        shifted = [torch.tensor(p._array + sign * eps * v._array, requires_grad=True) for p, v in zip(params, vectors)]
        grads = torch.autograd.grad(f(*shifted), shifted, allow_unused=True)
        return [np.zeros(p.shape) if g is None else g._array for g, p in zip(grads, params)]
    return [(a - b) / (2 * eps) for a, b in zip(gradient(1), gradient(-1))]


def _random_function(seed, n_ops=25):
    """A smooth random function of 3 parameters of shape (3,), replayed from a seed (for hvp)."""
    rng = np.random.default_rng(seed)
    plan = []
    for k in range(n_ops):
        if rng.random() < 0.4:
            plan.append(("unary", int(rng.integers(len(UNARY))), int(rng.integers(k + 3))))
        else:
            plan.append(("binary", int(rng.integers(len(BINARY))), int(rng.integers(k + 3)), int(rng.integers(k + 3))))

    def f(*params):
        values = list(params)
        for step in plan:
            if step[0] == "unary":
                values.append(UNARY[step[1]][1](values[step[2]]))
            else:
                values.append(BINARY[step[1]][1](values[step[2]], values[step[3]]).tanh())
        return values[-1].sum() + sum((v * v).sum() for v in values[-3:])
    return f


def _mlp_loss(inputs, targets):
    def f(w1, b1, w2):
        return (F.linear(F.linear(inputs, w1, b1).tanh(), w2) - targets).pow(2).mean()
    return f


def _deep(x, y):
    for _ in range(200):
        x = (x * y).sin() + x * 0.5
    return x.sum()


def _hvp_cases():
    rng = np.random.default_rng(11)
    a = rng.standard_normal((4, 4))
    a = torch.tensor(a + a.T)
    yield "a quadratic form 0.5 x^T A x (H = A)", lambda x: 0.5 * (x * (a @ x)).sum(), [(4,)]
    yield "(x ** 3).sum() * y", lambda x, y: (x ** 3).sum() * y, [(3,), ()]
    yield "f(x, y) = (x * y).sin().sum() on a (2, 3) x and a (3,) y (broadcasting)", \
        lambda x, y: (x * y).sin().sum(), [(2, 3), (3,)]
    yield "f linear in y: (x ** 2).sum() + (3 * y).sum()", lambda x, y: (x ** 2).sum() + (3 * y).sum(), [(2,), (2,)]
    yield "f does not use z: (x * y).tanh().sum()", lambda x, y, z: (x * y).tanh().sum(), [(3,), (3,), (2,)]
    yield "f linear in everything: (2 * x).sum() + y", lambda x, y: (2 * x).sum() + y, [(3,), ()]
    yield "(x * c).sum() with a constant tensor c (linear)", lambda x: (x * torch.tensor(2.0,
        dtype=torch.float64)).sum(), [(2,)]
    for seed in range(4):
        yield f"a random smooth function (seed {seed})", _random_function(seed), [(3,), (3,), (3,)]
    inputs, targets = torch.tensor(rng.standard_normal((6, 4))), torch.tensor(rng.standard_normal((6, 2)))
    yield "the loss of a small MLP", _mlp_loss(inputs, targets), [(5, 4), (5,), (2, 5)]
    yield "a chain of 200 steps x = (x * y).sin() + x * 0.5", _deep, [(2,), (2,)]


HVP_YOURSELF = ("write hvp with torch.autograd.grad yourself: do not call torch.autograd.functional or torch.func, "
                "which compute Hessian products for you")


def _hessian_helpers():
    """chibigrad's functions that compute a Hessian-vector product, or a Hessian, for the caller."""
    functional, func = torch.autograd.functional, torch.func
    return [functional.hvp, functional.vhp, functional.hessian, functional.jacobian, functional.jvp, functional.vjp,
            func.grad, func.grad_and_value, func.vjp, func.jvp, func.jacrev, func.jacfwd, func.hessian]


def check_hvp(hvp):
    with forbidden(_hessian_helpers(), HVP_YOURSELF):
        _check_hvp(hvp)


def _check_hvp(hvp):
    rng = np.random.default_rng(12)
    for case, f, shapes in _hvp_cases():
        what = f"hvp on {case}"
        params = [torch.tensor(rng.uniform(-1, 1, s), requires_grad=True) for s in shapes]
        vectors = [torch.tensor(rng.standard_normal(s)) for s in shapes]
        got = call(what, hvp, f, params, vectors)
        expect(len(got) == len(params), f"{what}: {len(got)} results for {len(params)} parameters")
        for i, (h, e, p) in enumerate(zip(got, _numerical_hvp(f, params, vectors), params)):
            expect(h is not None, f"{what}: None for parameter {i}; return zeros where the Hessian is zero")
            assert_close(h, e, f"{what}: (Hv) for parameter {i} (against central differences of the gradient)",
                         rtol=1e-5, atol=1e-6)
            expect(h.grad_fn is None, f"{what}: parameter {i}: the result has a grad_fn; return plain tensors "
                                      "(the second autograd.grad needs no create_graph)")
            expect(p.grad is None, f"{what}: parameter {i} got a .grad; use torch.autograd.grad, not backward")
    x = torch.tensor([0.5, -1.0], dtype=torch.float32, requires_grad=True)
    h, = call("hvp on float32", hvp, lambda x: (x ** 4).sum(), [x], [torch.ones(2)])
    expect(h.dtype == torch.float32, f"hvp on a float32 parameter returned {h.dtype}")
    assert_close(h, [3.0, 12.0], "hvp of (x ** 4).sum() at [0.5, -1] along [1, 1]", rtol=1e-5)


# ---- exercise 4: count_alive_graphs --------------------------------------------------------------------------------

def _loop(kind):
    """A step function of a small training loop that keeps graphs alive in one of several ways."""
    rng = np.random.default_rng(len(kind))
    w = torch.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    inputs = torch.tensor(rng.standard_normal((5, 4)))
    box = {"total": 0.0, "kept": [], "count": 0}

    def step():
        loss = F.linear(inputs, w).tanh().pow(2).mean()
        if kind == "hook that reads its own loss (a reference cycle)":
            loss.register_hook(lambda grad: box["kept"].append(loss.item()) or None)
        loss.backward(retain_graph=kind.startswith("retain_graph"))
        box["count"] += 1
        if kind.endswith("total = total + loss"):
            box["total"] = box["total"] + loss
        elif kind == "a list of the losses":
            box["kept"].append(loss)
        elif kind == "a list of loss.detach()":
            box["kept"].append(loss.detach())
        elif kind == "a list of loss.item()":
            box["kept"].append(loss.item())
        elif kind == "the last loss, kept for printing":
            box["last"] = loss
        elif kind == "every other loss":
            if box["count"] % 2:
                box["kept"].append(loss)
        elif kind == "loss.grad_fn kept in a list":
            box["kept"].append(loss.grad_fn)
        w.grad = None
        return loss
    return step, box


ALIVE = (("retain_graph=True, nothing kept", lambda n: 0), ("nothing kept", lambda n: 0),
         ("total = total + loss", lambda n: n), ("retain_graph=True and total = total + loss", lambda n: n),
         ("a list of the losses", lambda n: n), ("a list of loss.detach()", lambda n: 0),
         ("a list of loss.item()", lambda n: 0), ("the last loss, kept for printing", lambda n: 1),
         ("every other loss", lambda n: (n + 1) // 2), ("loss.grad_fn kept in a list", lambda n: n),
         ("hook that reads its own loss (a reference cycle)", lambda n: 0))


def check_count_alive_graphs(count_alive_graphs):
    for k, (kind, expected) in enumerate(ALIVE):
        steps = (1, 4, 7)[k % 3]
        what = f"count_alive_graphs on a loop that keeps {kind}, {steps} steps"
        step, box = _loop(kind)
        with _no_cycle_collection():  # cycles are collected only when the student asks, as between two collections
            got = call(what, count_alive_graphs, step, steps)
        expect(box["count"] == steps, f"{what}: step() was called {box['count']} times, expected {steps}")
        expect(isinstance(got, (int, np.integer)) and not isinstance(got, bool),
               f"{what}: returned {got!r}, expected an int")
        hint = ""
        if got > expected(steps) and "cycle" in kind:
            hint = " (graphs in a reference cycle are garbage: call gc.collect() before counting)"
        elif got > expected(steps):
            hint = " (do you keep references to the losses yourself?)"
        elif got < expected(steps):
            hint = " (watch the graph, loss.grad_fn, not the loss tensor)"
        expect(got == expected(steps), f"{what}: got {got}, expected {expected(steps)}{hint}")
        del step, box
