"""Hidden tests of assignment 05_accumulation: micro-batches, an optimizer that skips None gradients,
gradient clipping per parameter group."""
import math

import numpy as np

import chibigrad as torch
import chibigrad.nn.functional as F
from chibigrad import memory, nn, optim
from chibigrad.nn.utils import clip_grad

from . import assert_close, call, expect, forbidden


# ---- exercise 1: accumulate ----------------------------------------------------------------------------------------

def _model(seed, width=6, outputs=2):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, width), nn.Tanh(), nn.Linear(width, outputs)).to(torch.float64)


def _accumulate_case(accumulate, what, model, loss_fn, inputs, targets, micro_batch, prior):
    params = list(model.parameters())
    full = loss_fn(model(inputs), targets)
    expected = torch.autograd.grad(full, params)
    rng = np.random.default_rng(micro_batch)
    for p in params:
        p.grad = torch.tensor(rng.standard_normal(tuple(p.shape))) if prior else None
    before = [None if p.grad is None else p.grad._array.copy() for p in params]
    got = call(what, accumulate, model, loss_fn, inputs, targets, micro_batch)
    expect(isinstance(got, float), f"{what}: returned a {type(got).__name__}; return the batch loss as a Python float")
    expect(abs(got - full.item()) <= 1e-9 * max(1.0, abs(full.item())),
           f"{what}: returned {got}, but the whole batch's loss is {full.item()}")
    for (name, p), e, b in zip(model.named_parameters(), expected, before):
        expect(p.grad is not None, f"{what}: {name}.grad is None after accumulate")
        want = e._array if b is None else b + e._array
        assert_close(p.grad, want, f"{what}: {name}.grad" + (" (added to the .grad it had before)" if prior else ""),
                     rtol=1e-9, atol=1e-12)
        p.grad = None


def _peak_saved(fn):
    with memory.measure() as m:
        result = fn()
    return m.saved_peak, result


def check_accumulate(accumulate):
    rng = np.random.default_rng(5)
    inputs, targets = torch.tensor(rng.standard_normal((10, 4))), torch.tensor(rng.standard_normal((10, 2)))
    for k, micro_batch in enumerate((4, 3, 1, 10, 16, 6, 9)):
        sizes = [min(micro_batch, 10 - s) for s in range(0, 10, micro_batch)]
        _accumulate_case(accumulate, f"accumulate on 10 samples in micro-batches of {sizes}", _model(k), F.mse_loss,
                         inputs, targets, micro_batch, prior=k % 2 == 1)
    labels = torch.tensor(rng.integers(0, 3, 9))
    _accumulate_case(accumulate, "accumulate with F.cross_entropy on 9 samples in micro-batches of [4, 4, 1]",
                     _model(7, outputs=3), F.cross_entropy, torch.tensor(rng.standard_normal((9, 4))), labels, 4,
                     prior=True)
    _accumulate_case(accumulate, "accumulate on 7 samples in micro-batches of [2, 2, 2, 1]", _model(8), F.mse_loss,
                     inputs[:7], targets[:7], 2, prior=False)
    # memory: one micro-batch's graph at a time
    model = _model(9, width=256)
    inputs, targets = torch.tensor(rng.standard_normal((64, 4))), torch.tensor(rng.standard_normal((64, 2)))
    one, loss = _peak_saved(lambda: F.mse_loss(model(inputs[:16]), targets[:16]))
    del loss
    peak, _ = _peak_saved(lambda: call("accumulate on 64 samples in micro-batches of 16", accumulate, model,
                                       F.mse_loss, inputs, targets, 16))
    expect(peak <= 1.25 * one + 256, f"accumulate on 64 samples in micro-batches of 16: saved tensors peaked at {peak} "
                                     f"bytes, while one micro-batch's graph saves {one}: call backward on each "
                                     "micro-batch before building the next one's graph")


# ---- exercise 2: Lion ----------------------------------------------------------------------------------------------

class _NumpyLion:
    """The update rule, on numpy arrays, for parameters in groups."""

    def __init__(self, groups):
        self.groups, self.m = groups, {}

    def step(self, values, grads):
        for group in self.groups:
            beta1, beta2 = group["betas"]
            for i in group["params"]:
                g = grads[i]
                if g is None:
                    continue
                m = self.m.setdefault(i, np.zeros_like(values[i]))
                values[i] = values[i] * (1 - group["lr"] * group["weight_decay"])
                values[i] = values[i] - group["lr"] * np.sign(beta1 * m + (1 - beta1) * g)
                self.m[i] = beta2 * m + (1 - beta2) * g


def _lion_run(Lion, what, shapes, groups, steps, dtype=torch.float64, seed=0):
    rng = np.random.default_rng(seed)
    params = [torch.tensor(rng.standard_normal(s), dtype=dtype, requires_grad=True) for s in shapes]
    arrays = [p._array for p in params]
    spec = [dict(g, params=[params[i] for i in g["params"]]) for g in groups]
    opt = call(f"{what}: Lion(...)", Lion, spec)
    oracle = _NumpyLion(groups)
    values = [p._array.astype(np.float64) for p in params]
    for step in range(steps):
        grads = []
        for i, p in enumerate(params):
            kind = rng.choice(["random", "random", "none", "zeros"])
            g = None if kind == "none" else np.zeros(p.shape) if kind == "zeros" else rng.standard_normal(p.shape)
            p.grad = None if g is None else torch.tensor(g, dtype=dtype)
            grads.append(g)
        versions = [p._version for p in params]
        oracle.step(values, grads)
        result = call(f"{what}, step {step + 1}", opt.step)
        expect(result is None, f"{what}: step() without a closure should return None, got {result!r}")
        for i, p in enumerate(params):
            kind = "None" if grads[i] is None else "zeros" if not np.any(grads[i]) else "a random gradient"
            where = f"{what}, step {step + 1}: parameter {i} (its .grad was {kind})"
            expect(p._array is arrays[i], f"{where}: the parameter holds a new array; update it in place")
            expect(p.is_leaf and p.grad_fn is None and p.requires_grad,
                   f"{where}: the parameter is no longer a leaf that requires grad; update it under torch.no_grad()")
            expect(p.dtype == dtype, f"{where}: the parameter became {p.dtype}")
            assert_close(p, values[i], where, rtol=1e-5 if dtype == torch.float32 else 1e-12,
                         atol=1e-6 if dtype == torch.float32 else 1e-12)
            if grads[i] is not None:
                expect(p._version > versions[i], f"{where}: its version did not change; update it in place, "
                                                 "on the parameter itself")
            if i in oracle.m:
                m = opt.state.get(p, {}).get("exp_avg")
                expect(isinstance(m, torch.Tensor), f"{where}: self.state[p]['exp_avg'] should hold the momentum")
                assert_close(m, oracle.m[i], f"{where}: self.state[p]['exp_avg']", rtol=1e-6, atol=1e-7)
            else:
                expect(not opt.state.get(p), f"{where}: it never had a gradient, so it should have no state; "
                                             "skip parameters whose .grad is None")
    return opt, params


def check_lion(Lion):
    p = torch.zeros(2, requires_grad=True)
    opt = call("Lion([p])", Lion, [p])
    group = opt.param_groups[0]
    expect(group.get("lr") == 1e-4 and tuple(group.get("betas", ())) == (0.9, 0.99) and
           group.get("weight_decay") == 0.0, f"Lion's defaults: lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0; the "
                                             f"group holds {dict((k, v) for k, v in group.items() if k != 'params')}")
    _lion_run(Lion, "Lion with one group (lr 0.01, betas (0.9, 0.99), weight_decay 0.1)", [(3,), (2, 2), ()],
              [dict(params=[0, 1, 2], lr=0.01, betas=(0.9, 0.99), weight_decay=0.1)], steps=8, seed=1)
    _lion_run(Lion, "Lion with two groups of their own hyper-parameters", [(3,), (2, 2), (4,)],
              [dict(params=[0, 2], lr=0.05, betas=(0.8, 0.9), weight_decay=0.0),
               dict(params=[1], lr=0.001, betas=(0.95, 0.999), weight_decay=1.0)], steps=8, seed=2)
    _lion_run(Lion, "Lion on float32 parameters", [(5,), (2, 3)],
              [dict(params=[0, 1], lr=0.003, betas=(0.9, 0.99), weight_decay=0.01)], steps=5, dtype=torch.float32,
              seed=3)
    # set_to_none: after zero_grad() nothing moves; after zero_grad(set_to_none=False) momentum still moves
    w = torch.tensor([0.5, -0.5], dtype=torch.float64, requires_grad=True)
    opt = call("Lion", Lion, [w], lr=0.1)
    w.grad = torch.tensor([1.0, -1.0], dtype=torch.float64)
    call("Lion.step", opt.step)
    opt.zero_grad(set_to_none=False)
    before = w._array.copy()
    call("Lion.step after zero_grad(set_to_none=False)", opt.step)
    assert_close(w, before - 0.1 * np.array([1.0, -1.0]), "Lion.step after zero_grad(set_to_none=False) (a zero "
                 "gradient is a gradient: the momentum moves the parameter)")
    opt.zero_grad()
    before = w._array.copy()
    call("Lion.step after zero_grad()", opt.step)
    assert_close(w, before, "Lion.step after zero_grad() (the gradient is None: nothing moves)")
    # closure, called with grad enabled even when step runs under no_grad
    w = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    opt = call("Lion", Lion, [w], lr=0.1)
    calls = []

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        calls.append(loss.item())
        return loss

    with torch.no_grad():
        result = call("Lion.step(closure) under torch.no_grad()", opt.step, closure)
    expect(len(calls) == 1, f"Lion.step(closure): the closure ran {len(calls)} times, expected once")
    expect(isinstance(result, torch.Tensor) and result.item() == 5.0,
           f"Lion.step(closure) should return the closure's loss (5.0), got {result!r}")
    assert_close(w, [0.9, 1.9], "Lion.step(closure): w after the step")


# ---- exercise 3: clip_grad_norm_groups_ --------------------------------------------------------------------------------

NONFINITE = ("The total norm of order {} for gradients from `parameters` is non-finite, so it cannot be clipped. To "
             "disable this error and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
CLIP_YOURSELF = "write the clipping yourself: do not call chibigrad's clip_grad_norm_"


def _norm(grads, norm_type):
    flat = np.concatenate([np.abs(g).ravel() for g in grads])
    if norm_type == math.inf:
        return flat.max()
    return (flat ** norm_type).sum() ** (1 / norm_type)


def _clip_case(clip, what, groups, max_norm, norm_type=2.0, dtype=torch.float64, seed=0):
    """``groups``: lists of gradient shapes (None: that parameter has no gradient), with an optional own max_norm."""
    rng = np.random.default_rng(seed)
    spec, grads, expected_norms, expected = [], [], [], []
    for shapes, own in groups:
        params = [torch.zeros((1,) if s is None else s, dtype=dtype, requires_grad=True) for s in shapes]
        arrays = [None if s is None else rng.standard_normal(s) * rng.uniform(0.1, 3) for s in shapes]
        for p, a in zip(params, arrays):
            p.grad = None if a is None else torch.tensor(a, dtype=dtype)
        group = {"params": params} if own is None else {"params": params, "max_norm": own}
        spec.append(group)
        present = [p.grad._array.astype(np.float64) for p in params if p.grad is not None]
        total = _norm(present, norm_type) if present else 0.0
        scale = min(1.0, (max_norm if own is None else own) / (total + 1e-6))
        expected_norms.append(total)
        expected.append([None if p.grad is None else p.grad._array * scale for p in params])
        grads.append([p.grad for p in params])
    opt = optim.SGD(spec, lr=0.1)
    arrays = [[None if g is None else g._array for g in gs] for gs in grads]
    with forbidden([clip_grad.clip_grad_norm_, clip_grad._vector_norm], CLIP_YOURSELF):
        got = call(what, clip, opt, max_norm, norm_type)
    expect(isinstance(got, list) and len(got) == len(groups), f"{what}: returned {got!r}; expected a list with one "
                                                              f"norm per group ({len(groups)})")
    rtol = 1e-5 if dtype == torch.float32 else 1e-9
    for k, (norm, want) in enumerate(zip(got, expected_norms)):
        expect(isinstance(norm, float), f"{what}: group {k}'s norm is a {type(norm).__name__}; return Python floats")
        expect(abs(norm - want) <= rtol * max(1.0, want), f"{what}: group {k}'s norm before clipping is {want}, "
                                                          f"got {norm}")
    for k, group in enumerate(spec):
        for i, p in enumerate(group["params"]):
            if expected[k][i] is None:
                expect(p.grad is None, f"{what}: group {k}, parameter {i} had no gradient and got one")
                continue
            expect(p.grad is grads[k][i] and p.grad._array is arrays[k][i],
                   f"{what}: group {k}, parameter {i}: .grad was replaced; scale it in place (mul_)")
            assert_close(p.grad, expected[k][i], f"{what}: group {k}, parameter {i}: the clipped gradient", rtol=rtol,
                         atol=1e-7 if dtype == torch.float32 else 1e-12)


def check_clip_grad_norm_groups(clip):
    _clip_case(clip, "clip_grad_norm_groups_ with one group above max_norm", [([(3,), (2, 2)], None)], 0.5, seed=1)
    _clip_case(clip, "clip_grad_norm_groups_ with one group below max_norm", [([(3,), (2, 2)], None)], 100.0, seed=2)
    groups = [([(3,), None, (2,)], None), ([(4,)], 0.1), ([None, None], 1.0), ([(2, 3)], None), ([(5,), (1,)], 50.0)]
    for norm_type in (2.0, 1.0, 3, math.inf):
        _clip_case(clip, f"clip_grad_norm_groups_ with 5 groups (own max_norm in some, one without gradients), "
                         f"norm_type={norm_type}", groups, 0.7, norm_type=norm_type, seed=3)
    _clip_case(clip, "clip_grad_norm_groups_ on float32 gradients", [([(10,), (3, 3)], None), ([(4,)], 0.2)], 1.0,
               dtype=torch.float32, seed=4)
    _clip_case(clip, "clip_grad_norm_groups_ on a single number", [([()], None)], 0.5, seed=5)
    for norm_type, bad in ((2.0, math.nan), (math.inf, math.inf), (1.0, -math.inf)):
        w, v = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
        w.grad, v.grad = torch.tensor([1.0, bad]), torch.tensor([1.0, 1.0])
        opt = optim.SGD([{"params": [v]}, {"params": [w]}], lr=0.1)
        what = f"clip_grad_norm_groups_(..., norm_type={norm_type}, error_if_nonfinite=True) on a gradient with {bad}"
        with forbidden([clip_grad.clip_grad_norm_, clip_grad._vector_norm], CLIP_YOURSELF):
            try:
                clip(opt, 1.0, norm_type, True)
            except RuntimeError as err:
                expect(str(err) == NONFINITE.format(float(norm_type)), f"{what}: raised {str(err)!r}, expected "
                                                                       f"{NONFINITE.format(float(norm_type))!r}")
            except Exception as err:
                raise AssertionError(f"{what}: raised {type(err).__name__}: {err}") from err
            else:
                raise AssertionError(f"{what}: no error; a non-finite total norm must raise RuntimeError")
            call("the same with error_if_nonfinite=False", clip, opt, 1.0, norm_type, False)
