"""Hidden checks of 03_graph_lifetime (saved tensors, freeing, create_graph, graphs kept alive), run by the judge.

LeakyReLU's inputs are written out; per_loss_grads', hvp's and count_alive_graphs' cases are named by number
(``cases.per_loss_case_03``, ``cases.hvp_case_03``, ``cases.ALIVE_KINDS_03``) and built on both sides. The
student's code runs in the student process, which reports values, saved bytes and what stayed alive as data;
the judge's answers come from numpy, from chibigrad's own engine on its own copy of each graph, and from
central differences.
"""
import numpy as np

import chibigrad as torch
from chibigrad.autograd.node import FREED_MESSAGE

from .. import cases
from ..judge import exercise, expect, expect_array

FREED = f"RuntimeError: {FREED_MESSAGE}"
SAVE_THE_MASK = ("save the mask with ctx.save_for_backward (the engine frees saved tensors after backward); a tensor "
                 "kept as a ctx attribute is never freed")


def _expect_tensor(got, what):
    """``got`` came back as an array (a Tensor in the student process), not None or ``("@other", type name)``."""
    if not isinstance(got, np.ndarray):
        raise AssertionError(f"{what}: got {'None' if got is None else 'a ' + str(got[-1])}, expected a Tensor")


# ---- exercise 1: LeakyReLU ------------------------------------------------------------------------------------------

def _leaky_input(rng, shape):
    data = rng.uniform(-2, 2, shape)
    return np.where(np.abs(data) < 0.1, 0.5, data)  # away from the kink


def _expect_second_raises(got, what):
    expect(got is not None, f"{what}: it worked, but backward should have freed what your Function saved: "
                            f"{SAVE_THE_MASK}")
    expect(got == FREED, f"{what}: raised {got}, expected PyTorch's 'Trying to backward through the graph a second "
                         "time ...' error")


def _expect_gradient(got, expected, what):
    expect(got is not None, f"{what}: x.grad is None (backward should return the gradient for x first)")
    expect_array(got, expected, what, tol=1e-6)


@exercise("03_graph_lifetime:leaky_relu")
def leaky_relu(student):
    rng = np.random.default_rng(3)
    for shape, slope, dtype in [((), 0.01, "float64"), ((7,), 0.2, "float64"), ((3, 4), 0.0, "float32"),
                                ((2, 3, 4), -0.5, "float64"), ((5,), 1.5, "float32")]:
        what = f"LeakyReLU.apply(x, {slope}) on a {dtype} x of shape {shape}"
        x, g = _leaky_input(rng, shape), rng.standard_normal(shape)
        x_as, g_as = (np.asarray(a).astype(dtype).astype(np.float64) for a in (x, g))
        got = student.call("LeakyReLU", {"recipe": "case_03", "x": x, "grad": g, "slope": slope, "dtype": dtype},
                           observe="leaky", what=what)
        expect(got["type"] == "Tensor", f"{what}: returned a {got['type']}, expected a Tensor")
        expect(got["dtype"] == dtype, f"{what}: the result is {got['dtype']}, expected x's dtype {dtype}")
        expect_array(got["value"], np.where(x_as > 0, x_as, x_as * slope), f"{what}: forward", tol=1e-6)
        expect(got["grad_fn"] == "LeakyReLUBackward", f"{what}: the result's grad_fn should be LeakyReLUBackward, "
                                                      f"got {got['grad_fn']}")
        n = int(np.size(x))
        node_bytes = sum(nbytes for _, nbytes, _ in got["node_saved"])
        expect(got["kept"] == n and node_bytes == n,
               f"{what}: {max(got['kept'], node_bytes)} bytes are saved for backward; a boolean mask of {n} elements "
               f"is {n} bytes (save only the mask, not x or the result)")
        raw = got["raw"]
        expect(len(raw) in (1, 2) and (len(raw) == 1 or raw[1] is None),
               f"{what}: backward should return (gradient for x, None for negative_slope), got {len(raw)} values")
        _expect_tensor(raw[0], f"{what}: backward's gradient for x")
        expect_array(raw[0], np.where(x_as > 0, g_as, g_as * slope), f"{what}: the gradient backward returns",
                     tol=1e-6)
        expect(got["left"] == 0, f"{what}: the result was deleted, yet {got['left']} bytes of saved tensors are still "
                                 "held")
    for shape in [(4,), (2, 3)]:
        x, g = _leaky_input(rng, shape), rng.standard_normal(shape)
        what = f"x.grad through LeakyReLU (negative_slope 0.3) on a float64 x of shape {shape}"
        got = student.call("LeakyReLU", {"recipe": "case_03", "x": x, "grad": g, "slope": 0.3}, observe="leaky_grad",
                           what=what)
        _expect_gradient(got, np.where(x > 0, g, g * 0.3), what)
    what = "LeakyReLU(x, 0.25) at x = [-1, 0, 0, 2]: x.grad (the derivative at 0 is negative_slope, as in PyTorch: " \
           "the mask is x > 0)"
    got = student.call("LeakyReLU", {"recipe": "case_03", "x": np.array([-1.0, 0.0, 0.0, 2.0]), "grad": np.ones(4),
                                     "slope": 0.25}, observe="leaky_grad", what=what)
    _expect_gradient(got, [0.25, 0.25, 0.25, 1.0], what)
    _leaky_lifetime(student, rng)
    _leaky_deep(student)


def _leaky_lifetime(student, rng):
    x, g = _leaky_input(rng, (1000,)), rng.standard_normal(1000)
    what = "LeakyReLU.apply(x, 0.1) on 1000 float64 elements, then backward"
    got = student.call("LeakyReLU", {"recipe": "case_03", "x": x, "grad": g}, observe="leaky_lifetime", what=what)
    expect(got["type"] == "Tensor", f"{what}: LeakyReLU.apply returned a {got['type']}, expected a Tensor")
    expect(got["saved_after"] == 0, f"after backward, {got['saved_after']} bytes of saved tensors are still held: let "
                                    "ctx.save_for_backward keep the mask, so the engine frees it")
    expect(got["extra_after"] <= 0, f"after backward, {got['extra_after']} bytes that your Function made are still "
                                    "alive besides the result and x.grad: a tensor or array kept as a ctx attribute "
                                    f"outlives backward (the engine cannot free it); {SAVE_THE_MASK}")
    _expect_second_raises(got["again"], "a second backward through LeakyReLU")
    expected = np.where(x > 0, g, g * 0.1)
    _expect_gradient(got["first"], expected, "x.grad after backward(retain_graph=True) through LeakyReLU")
    _expect_gradient(got["second"], 2 * expected, "x.grad after two backward calls (the first with retain_graph=True)")
    _expect_second_raises(got["third"], "a third backward (the second one had no retain_graph)")
    expect(got["create_graph"], "with create_graph=True the gradient should depend on the incoming gradient (it has "
                                "no grad_fn): write backward with tensor operations (torch.where, *), not numpy")


def _leaky_deep(student, depth=3000):
    x = np.array([-1.5, -0.5, 0.5, 2.0])
    what = f"a chain of {depth} steps y = -LeakyReLU.apply(y, -1.0)"
    got = student.call("LeakyReLU", {"recipe": "case_03", "x": x, "depth": depth}, observe="leaky_deep", what=what,
                       timeout=60)
    expect(got["type"] == "Tensor", f"{what}: returned a {got['type']}, expected a Tensor")
    expect_array(got["value"], -np.abs(x), f"{what}: forward")
    expect(got["masks"] == 4 * depth, f"{what} on 4 elements: {got['masks']} bytes saved by LeakyReLUBackward nodes, "
                                      f"expected {4 * depth} (a 4-byte mask each)")
    _expect_gradient(got["grad"], np.where(x > 0, -1.0, 1.0), f"{what}: x.grad")
    expect(got["left"] == 0, f"{what}: after backward {got['left']} bytes of saved tensors are still held")


# ---- exercise 2: per_loss_grads ------------------------------------------------------------------------------------

def _engine_grads(losses, params):
    """Each loss's gradients by chibigrad's engine (zeros where the loss does not reach a parameter)."""
    return [[np.zeros(tuple(p.shape)) if g is None else g.numpy()
             for g, p in zip(torch.autograd.grad(loss, params, torch.ones_like(loss), retain_graph=True,
                                                 allow_unused=True), params)] for loss in losses]


@exercise("03_graph_lifetime:per_loss_grads")
def per_loss_grads(student):
    for index in range(cases.PER_LOSS_CASES_03):
        case, losses, params = cases.per_loss_case_03(index)
        what, expected = f"per_loss_grads on {case}", _engine_grads(losses, params)
        got = student.call("per_loss_grads", {"recipe": "case_03", "case": index}, observe="per_loss", what=what,
                           timeout=60)
        expect(got["type"] == "list", f"{what}: returned a {got['type']}, expected a list")
        expect(len(got["losses"]) == len(losses), f"{what}: {len(got['losses'])} results for {len(losses)} losses")
        for k, (item, wanted) in enumerate(zip(got["losses"], expected)):
            grads = item["grads"]
            expect(len(grads) == len(params), f"{what}: loss {k}: {len(grads)} gradients for {len(params)} "
                                              "parameters")
            for i, (g, e) in enumerate(zip(grads, wanted)):
                expect(g is not None, f"{what}: loss {k}, parameter {i}: None; a parameter the loss does not depend "
                                      "on gets zeros")
                _expect_tensor(g, f"{what}: loss {k}, parameter {i}")
                expect_array(g, e, f"{what}: loss {k}, parameter {i}", tol=1e-6)
                expect(not item["grad_fn"][i], f"{what}: loss {k}, parameter {i}: the gradient has a grad_fn; return "
                                               "plain gradients (no create_graph)")
        for i, kept in enumerate(got["kept"]):
            expect(kept, f"{what}: parameter {i}'s .grad changed; use torch.autograd.grad, which leaves .grad alone")
        held = got["held"]
        expect(not held, f"{what}: when per_loss_grads returns, nodes still hold saved tensors: {held[:4]}"
                         f"{'...' if len(held) > 4 else ''}; free every node of the losses' graphs "
                         "(node.release_saved())")


# ---- exercise 3: hvp -----------------------------------------------------------------------------------------------

def _numerical_hvp(f, params, vectors, eps=1e-5):
    """Central differences of the gradient along v: (g(p + eps v) - g(p - eps v)) / (2 eps), in float64."""
    def gradient(sign):
        shifted = [torch.tensor(p + sign * eps * v, requires_grad=True) for p, v in zip(params, vectors)]
        grads = torch.autograd.grad(f(*shifted), shifted, allow_unused=True)
        return [np.zeros(np.shape(p)) if g is None else g.numpy() for g, p in zip(grads, params)]
    return [(a - b) / (2 * eps) for a, b in zip(gradient(1), gradient(-1))]


@exercise("03_graph_lifetime:hvp")
def hvp(student):
    for index in range(cases.HVP_CASES_03):
        case, f, params, vectors = cases.hvp_case_03(index)
        float32 = params[0].dtype == np.float32
        what = case if float32 else f"hvp on {case}"
        got = student.call("hvp", {"recipe": "case_03", "case": index}, observe="hvp", what=what, timeout=30)
        expect(got["type"] in ("tuple", "list"), f"{what}: returned a {got['type']}, expected a tuple of tensors")
        values = got["values"]
        expect(len(values) == len(params), f"{what}: {len(values)} results for {len(params)} parameters")
        expected = [[3.0, 12.0]] if float32 else _numerical_hvp(f, params, vectors)
        for i, (h, e) in enumerate(zip(values, expected)):
            expect(h is not None, f"{what}: None for parameter {i}; return zeros where the Hessian is zero")
            _expect_tensor(h, f"{what}: parameter {i}")
            expect_array(h, e, f"{what}: (Hv) for parameter {i}" + ("" if float32 else " (against central "
                                                                    "differences of the gradient)"), tol=1e-5)
            expect(not got["grad_fn"][i], f"{what}: parameter {i}: the result has a grad_fn; return plain tensors "
                                          "(the second autograd.grad needs no create_graph)")
            expect(not got["param_grads"][i], f"{what}: parameter {i} got a .grad; use torch.autograd.grad, not "
                                              "backward")
        if float32:
            expect(got["dtype"][0] == "float32", f"hvp on a float32 parameter returned {got['dtype'][0]}")


# ---- exercise 4: count_alive_graphs --------------------------------------------------------------------------------

ALIVE = {"retain_graph=True, nothing kept": lambda n: 0, "nothing kept": lambda n: 0,
         "total = total + loss": lambda n: n, "retain_graph=True and total = total + loss": lambda n: n,
         "a list of the losses": lambda n: n, "a list of loss.detach()": lambda n: 0,
         "a list of loss.item()": lambda n: 0, "the last loss, kept for printing": lambda n: 1,
         "every other loss": lambda n: (n + 1) // 2, "loss.grad_fn kept in a list": lambda n: n,
         "hook that reads its own loss (a reference cycle)": lambda n: 0}


@exercise("03_graph_lifetime:count_alive_graphs")
def count_alive_graphs(student):
    for k, kind in enumerate(cases.ALIVE_KINDS_03):
        steps = (1, 4, 7)[k % 3]
        what, expected = f"count_alive_graphs on a loop that keeps {kind}, {steps} steps", ALIVE[kind](steps)
        got = student.call("count_alive_graphs", {"recipe": "case_03", "kind": k, "steps": steps}, observe="alive",
                           what=what)
        expect(got["count"] == steps, f"{what}: step() was called {got['count']} times, expected {steps}")
        value = got["value"]
        expect(value is not None, f"{what}: returned a {got['type']}, expected an int")
        hint = ""
        if value > expected and "cycle" in kind:
            hint = " (graphs in a reference cycle are garbage: call gc.collect() before counting)"
        elif value > expected:
            hint = " (do you keep references to the losses yourself?)"
        elif value < expected:
            hint = " (watch the graph, loss.grad_fn, not the loss tensor)"
        expect(value == expected, f"{what}: got {value}, expected {expected}{hint}")
