"""Hidden checks of 05_accumulation (micro-batches, an optimizer that skips None gradients, clipping per parameter
group), run by the judge.

Models, batches, gradients and parameter groups are built on both sides from seeded recipes
(``cases.accumulate_case_05``, ``cases.lion_case_05``, ``cases.clip_case_05``); the student's function runs in
the student process and its effects come back as arrays. The judge's answers come from chibigrad's own
``autograd.grad`` on its copy of each model, the Lion rule and the norms written here in numpy. Micro-batches
are checked where they happen: at each micro-batch's forward, ``.grad`` must already hold the earlier
micro-batches' gradients (values only a backward per micro-batch produces), besides the saved tensors' peak.
"""
import math

import numpy as np

import chibigrad as torch
from chibigrad import memory

from .. import cases
from ..judge import exercise, expect, expect_array

# ---- exercise 1: accumulate ----------------------------------------------------------------------------------------

# (samples, micro_batch, loss, outputs, prior .grad): uneven last micro-batches, one sample at a time, one
# micro-batch bigger than the batch, cross-entropy, .grad that holds something already
ACCUMULATE_CASES = [(10, m, "mse", 2, k % 2 == 1) for k, m in enumerate((4, 3, 1, 10, 16, 6, 9))] + \
    [(9, 4, "cross_entropy", 3, True), (7, 2, "mse", 2, False)]
BIG = {"seed": 9, "width": 256, "samples": 64, "micro_batch": 16}  # its saved tensors are measured


def _sizes(samples, micro_batch):
    return [min(micro_batch, samples - s) for s in range(0, samples, micro_batch)]


def _expected_grads(recipe):
    """``(whole batch's loss, its gradients, each micro-batch's share of them)`` on the judge's copy of the case."""
    model, loss_fn, inputs, targets, prior = cases.accumulate_case_05(recipe)
    params, n = list(model.parameters()), recipe["samples"]
    full = loss_fn(model(inputs), targets)
    shares = []
    for start in range(0, n, recipe["micro_batch"]):
        part = slice(start, min(start + recipe["micro_batch"], n))
        share = loss_fn(model(inputs[part]), targets[part]) * ((part.stop - part.start) / n)
        shares.append([g.numpy() for g in torch.autograd.grad(share, params)])
    return full.item(), [g.numpy() for g in torch.autograd.grad(full, params)], prior, shares


def _expect_accumulated(student, recipe):
    """One case: the loss returned, ``.grad`` after (prior + the batch's), and at each micro-batch's forward."""
    sizes = _sizes(recipe["samples"], recipe["micro_batch"])
    what = f"accumulate on {recipe['samples']} samples in micro-batches of {sizes}" + \
        (" with F.cross_entropy" if recipe.get("loss") == "cross_entropy" else "")
    got = student.call("accumulate", {"recipe": "case_05", **recipe}, observe="accumulate_05", what=what)
    loss, full, prior, shares = _expected_grads(recipe)
    expect(got["loss"] is not None, f"{what}: returned a {got['type']}; return the batch loss as a Python float")
    expect(abs(got["loss"] - loss) <= 1e-9 * max(1.0, abs(loss)),
           f"{what}: returned {got['loss']}, but the whole batch's loss is {loss}")
    base = [np.zeros_like(g) if b is None else b for g, b in zip(full, prior)]
    added = " (added to the .grad it had before)" if recipe.get("prior") else ""
    for k, (g, b, e) in enumerate(zip(got["grads"], base, full)):
        expect(g is not None, f"{what}: parameter {k}'s .grad is None after accumulate")
        expect_array(g, b + e, f"{what}: parameter {k}'s .grad{added}", tol=1e-9)
    rows = [f["rows"] for f in got["forwards"]]
    expect(rows == sizes, f"{what}: loss_fn ran (with grad enabled) on micro-batches of {rows}, expected {sizes}: "
                          "consecutive micro-batches, the last one smaller")
    for i, forward in enumerate(got["forwards"][1:], 1):
        want = [b + sum(share[k] for share in shares[:i]) for k, b in enumerate(base)]
        done = all(g is not None and g.shape == w.shape and np.allclose(g, w, rtol=1e-9, atol=1e-9)
                   for g, w in zip(forward["grads"], want))
        expect(done, f"{what}: when micro-batch {i + 1}'s forward began, .grad did not hold the gradients of the "
                     f"{i} micro-batch(es) before it: call backward on each micro-batch (its loss scaled by its share "
                     "of the batch) before building the next one's graph")
    return got


@exercise("05_accumulation:accumulate")
def accumulate(student):
    for k, (samples, micro_batch, loss, outputs, prior) in enumerate(ACCUMULATE_CASES):
        _expect_accumulated(student, {"seed": k, "samples": samples, "micro_batch": micro_batch, "loss": loss,
                                      "outputs": outputs, "prior": prior})
    model, loss_fn, inputs, targets, _ = cases.accumulate_case_05(BIG)
    with memory.measure() as one:
        loss_fn(model(inputs[:16]), targets[:16])
    got = _expect_accumulated(student, BIG)
    expect(got["saved_peak"] <= 1.25 * one.saved_peak + 256,
           f"accumulate on 64 samples in micro-batches of 16: saved tensors peaked at {got['saved_peak']} bytes, "
           f"while one micro-batch's graph saves {one.saved_peak}: free each micro-batch's graph (backward "
           "without retain_graph, keep no reference to it) before building the next one's")


# ---- exercise 2: Lion ----------------------------------------------------------------------------------------------

def _lion_step(groups, values, grads, momentum):
    """The update rule on numpy arrays: parameters whose gradient is None are skipped."""
    for group in groups:
        beta1, beta2 = group["betas"]
        for i in group["params"]:
            g = grads[i]
            if g is None:
                continue
            m = momentum.setdefault(i, np.zeros_like(values[i]))
            values[i] = values[i] * (1 - group["lr"] * group["weight_decay"])
            values[i] = values[i] - group["lr"] * np.sign(beta1 * m + (1 - beta1) * g)
            momentum[i] = beta2 * m + (1 - beta2) * g


def _lion_run(student, what, shapes, groups, steps, dtype="float64", seed=0):
    recipe = {"recipe": "case_05", "case": "run", "shapes": shapes, "groups": groups, "steps": steps,
              "dtype": dtype, "seed": seed}
    got = student.call("Lion", recipe, observe="lion_05", what=what)
    values, grads_per_step = cases.lion_case_05(recipe)
    values = [v.astype(dtype).astype(np.float64) for v in values]
    momentum, tol = {}, 1e-5 if dtype == "float32" else 1e-12
    for step, (grads, seen) in enumerate(zip(grads_per_step, got), 1):
        _lion_step(groups, values, grads, momentum)
        expect(seen["returned"] == "None", f"{what}: step() without a closure should return None, got "
                                           f"{seen['returned']}")
        for i, value in enumerate(values):
            kind = "None" if grads[i] is None else "zeros" if not np.any(grads[i]) else "a random gradient"
            where = f"{what}, step {step}: parameter {i} (its .grad was {kind})"
            expect(seen["same_array"][i], f"{where}: the parameter holds a new array; update it in place")
            expect(seen["leaf"][i], f"{where}: the parameter is no longer a leaf that requires grad; update it under "
                                    "torch.no_grad()")
            expect(seen["dtype"][i] == str(getattr(torch, dtype)), f"{where}: the parameter became {seen['dtype'][i]}")
            expect_array(seen["values"][i], value, where, tol=tol)
            if grads[i] is not None:
                expect(seen["moved"][i], f"{where}: its version did not change; update it in place, on the parameter "
                                         "itself")
            state = seen["state"][i]
            if i in momentum:
                expect(state["exp_avg"] is not None, f"{where}: self.state[p]['exp_avg'] should hold the momentum")
                expect_array(state["exp_avg"], momentum[i], f"{where}: self.state[p]['exp_avg']", tol=1e-6)
            else:
                expect(not state["has"], f"{where}: it never had a gradient, so it should have no state; skip "
                                         "parameters whose .grad is None")
    expect(len(got) == steps, f"{what}: {len(got)} steps came back, expected {steps}")


@exercise("05_accumulation:lion")
def lion(student):
    group = student.call("Lion", {"recipe": "case_05", "case": "defaults"}, observe="lion_05", what="Lion([p])")
    defaults = group.get("lr") == 1e-4 and group.get("weight_decay") == 0.0 and \
        isinstance(group.get("betas"), list) and tuple(group["betas"]) == (0.9, 0.99)
    expect(defaults, f"Lion's defaults: lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0; the group holds {group}")
    _lion_run(student, "Lion with one group (lr 0.01, betas (0.9, 0.99), weight_decay 0.1)", [(3,), (2, 2), ()],
              [dict(params=[0, 1, 2], lr=0.01, betas=(0.9, 0.99), weight_decay=0.1)], steps=8, seed=1)
    _lion_run(student, "Lion with two groups of their own hyper-parameters", [(3,), (2, 2), (4,)],
              [dict(params=[0, 2], lr=0.05, betas=(0.8, 0.9), weight_decay=0.0),
               dict(params=[1], lr=0.001, betas=(0.95, 0.999), weight_decay=1.0)], steps=8, seed=2)
    _lion_run(student, "Lion on float32 parameters", [(5,), (2, 3)],
              [dict(params=[0, 1], lr=0.003, betas=(0.9, 0.99), weight_decay=0.01)], steps=5, dtype="float32", seed=3)
    # after zero_grad(set_to_none=False) the momentum still moves the parameter; after zero_grad() nothing moves
    got = student.call("Lion", {"recipe": "case_05", "case": "set_to_none"}, observe="lion_05",
                       what="Lion(lr=0.1): a step, then zero_grad(set_to_none=False) and a step, then zero_grad() and "
                            "a step")
    w, momentum, expected = [np.array([0.5, -0.5])], {}, []
    for g in (np.array([1.0, -1.0]), np.zeros(2), None):
        _lion_step([dict(params=[0], lr=0.1, betas=(0.9, 0.99), weight_decay=0.0)], w, [g], momentum)
        expected.append(w[0])
    expect_array(got[1], expected[0], "Lion.step with the gradient [1, -1] (lr 0.1)")
    expect_array(got[2], expected[1], "Lion.step after zero_grad(set_to_none=False) (a zero gradient is a gradient: "
                                      "the momentum moves the parameter)")
    expect_array(got[3], expected[2], "Lion.step after zero_grad() (the gradient is None: nothing moves)")
    # the closure runs with grad enabled even when step runs under no_grad
    got = student.call("Lion", {"recipe": "case_05", "case": "closure"}, observe="lion_05",
                       what="Lion.step(closure) under torch.no_grad()")
    expect(got["calls"] == 1, f"Lion.step(closure): the closure ran {got['calls']} times, expected once")
    expect(got["type"] == "Tensor" and got["returned"] is not None and float(got["returned"]) == 5.0,
           f"Lion.step(closure) should return the closure's loss (a tensor holding 5.0), got a {got['type']}")
    expect_array(got["w"], [0.9, 1.9], "Lion.step(closure): w after the step")


# ---- exercise 3: clip_grad_norm_groups_ ----------------------------------------------------------------------------

NONFINITE = ("The total norm of order {} for gradients from `parameters` is non-finite, so it cannot be clipped. To "
             "disable this error and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")


def _norm(grads, norm_type):
    flat = np.concatenate([np.abs(g).ravel() for g in grads])
    if norm_type == math.inf:
        return flat.max()
    return (flat ** norm_type).sum() ** (1 / norm_type)


def _clip_case(student, what, groups, max_norm, norm_type=2.0, dtype="float64", seed=0):
    """``groups``: ([gradient shape, or None for a parameter without one], own max_norm or None)."""
    recipe = {"recipe": "case_05", "groups": groups, "max_norm": max_norm, "norm_type": norm_type, "dtype": dtype,
              "seed": seed}
    got = student.call("clip_grad_norm_groups_", recipe, observe="clip_05", what=what)
    grads, own = cases.clip_case_05(recipe)
    expect(got["norms"] is not None and len(got["norms"]) == len(groups),
           f"{what}: returned a {got['type']}{'' if got['norms'] is None else ' of ' + str(len(got['norms']))}; "
           f"expected a list with one norm per group ({len(groups)})")
    rtol = 1e-5 if dtype == "float32" else 1e-9
    for k, (gs, limit, norm) in enumerate(zip(grads, own, got["norms"])):
        present = [g.astype(np.float64) for g in gs if g is not None]
        want = _norm(present, norm_type) if present else 0.0
        expect(isinstance(norm, float), f"{what}: group {k}'s norm is {norm}; return Python floats")
        expect(abs(norm - want) <= rtol * max(1.0, want), f"{what}: group {k}'s norm before clipping is {want}, got "
                                                          f"{norm}")
        scale = min(1.0, (max_norm if limit is None else limit) / (want + 1e-6))
        for i, g in enumerate(gs):
            clipped = got["grads"][k][i]
            if g is None:
                expect(clipped is None, f"{what}: group {k}, parameter {i} had no gradient and got one")
                continue
            expect(got["in_place"][k][i], f"{what}: group {k}, parameter {i}: .grad was replaced; scale it in place "
                                          "(mul_)")
            expect_array(clipped, g.astype(np.float64) * scale, f"{what}: group {k}, parameter {i}: the clipped "
                                                                 "gradient", tol=rtol)


@exercise("05_accumulation:clip_grad_norm_groups")
def clip_grad_norm_groups(student):
    _clip_case(student, "clip_grad_norm_groups_ with one group above max_norm", [([(3,), (2, 2)], None)], 0.5, seed=1)
    _clip_case(student, "clip_grad_norm_groups_ with one group below max_norm", [([(3,), (2, 2)], None)], 100.0,
               seed=2)
    groups = [([(3,), None, (2,)], None), ([(4,)], 0.1), ([None, None], 1.0), ([(2, 3)], None), ([(5,), (1,)], 50.0)]
    for norm_type in (2.0, 1.0, 3, math.inf):
        _clip_case(student, f"clip_grad_norm_groups_ with 5 groups (own max_norm in some, one without gradients), "
                            f"norm_type={norm_type}", groups, 0.7, norm_type=norm_type, seed=3)
    _clip_case(student, "clip_grad_norm_groups_ on float32 gradients", [([(10,), (3, 3)], None), ([(4,)], 0.2)], 1.0,
               dtype="float32", seed=4)
    _clip_case(student, "clip_grad_norm_groups_ on a single number", [([()], None)], 0.5, seed=5)
    for norm_type, bad in ((2.0, math.nan), (math.inf, math.inf), (1.0, -math.inf)):
        what = f"clip_grad_norm_groups_(..., norm_type={norm_type}, error_if_nonfinite=True) on a gradient with {bad}"
        got = student.call("clip_grad_norm_groups_", {"recipe": "case_05", "bad": bad, "norm_type": norm_type,
                                                      "dtype": "float32", "seed": 0}, observe="clip_05", what=what)
        strict, lenient = got["errors"]
        want = f"RuntimeError: {NONFINITE.format(float(norm_type))}"
        expect(strict is not None, f"{what}: no error; a non-finite total norm must raise RuntimeError")
        expect(strict == want, f"{what}: raised {strict!r}, expected {want!r}")
        expect(lenient is None, f"clip_grad_norm_groups_(..., norm_type={norm_type}, error_if_nonfinite=False) on a "
                                f"gradient with {bad}: raised {lenient}; without the flag it scales, it does not raise")
