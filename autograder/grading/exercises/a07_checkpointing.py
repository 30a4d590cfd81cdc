"""Hidden checks of 07_checkpointing (a checkpoint Function with edges to the parameters, checkpointed
segments of any length, the fewest segments that fit a memory budget), run by the judge.

Models and inputs are named cases (``cases.case_07``: seeded, built alike on both sides). The student's code
runs in the student process and comes back as data: a training step's output, gradients and the random
numbers drawn after it, how often each layer ran, the bytes forward kept, what backward returned. The
judge's answers come from the same models run without checkpointing and, for the budgets, from chibigrad's
``checkpoint_sequential`` measured here: the peak of saved bytes over the whole step, forward and backward.
"""
import numpy as np

import chibigrad as torch
from chibigrad import memory
from chibigrad.autograd.node import FREED_MESSAGE
from chibigrad.utils.checkpoint import checkpoint_sequential

from .. import cases
from ..judge import exercise, expect, expect_array

TOL = 1e-9
CHECKPOINT_FN_CASES = ("mlp", "no_grad_input", "dropout", "one_row", "frozen")
SEGMENT_CASES = ((), (1,), (4,), (7,), (2, 5), (3, 4), (1, 2, 3, 4, 5, 6, 7))
CHOOSE_CASES = ("wide_first", "wide_first_dropout", "wide_then_narrow")


def reference_step(model, x, seed, run=None):
    """The step without checkpointing, run here: what a checkpointed step must give."""
    return cases.step_07(model, run or model, x, seed, lambda fn, *args: fn(*args))


def expect_step(got, ref, what):
    """The student's step equals the reference: output, every gradient, and the generator afterwards."""
    expect(got["type"] == "Tensor", f"{what}: expected a Tensor, got {got['type']}")
    expect_array(got["out"], ref["out"], f"{what}: the output", tol=TOL)
    for k, (g, r) in enumerate(zip(got["grads"], ref["grads"])):
        name = "x" if k == len(ref["grads"]) - 1 else f"parameter {k}"
        if r is None:
            expect(g is None, f"{what}: {name} needs no gradient, but its .grad is set")
            continue
        expect(g is not None, f"{what}: {name} got no gradient (.grad is None)")
        expect_array(g, r, f"{what}: the gradient of {name}", tol=TOL)
    expect(np.array_equal(got["after"], ref["after"]),
           f"{what}: after backward the random generator is not where it would be without checkpointing (its next "
           "numbers repeat earlier ones); put it back after the recomputation")


@exercise("07_checkpointing:checkpoint_fn")
def checkpoint_fn(student):
    for name in CHECKPOINT_FN_CASES:
        description, model, x = cases.case_07(name)
        what = f"CheckpointFn on {description}"
        got = student.call("CheckpointFn", {"recipe": "case_07", "case": name}, observe="checkpoint_fn_07", what=what)
        expect_step(got["step"], reference_step(model, x, 7), what)
        expect(got["grad_fn"] == "CheckpointFnBackward",
               f"{what}: the output's grad_fn should be CheckpointFnBackward, got {got['grad_fn']}")
        params = [p for p in model.parameters() if p.requires_grad] + ([x] if x.requires_grad else [])
        torch.manual_seed(7)
        expected = torch.autograd.grad(model(x).pow(2).mean(), params)
        for k, (g, e) in enumerate(zip(got["reached"], expected)):
            expect(g is not None, f"{what}: torch.autograd.grad(loss, parameters) got None for input {k}: return "
                                  "the parameters' gradients from backward (don't call backward() inside)")
            expect_array(g, e.numpy(), f"{what}: torch.autograd.grad(loss, parameters), input {k}", tol=TOL)
        raw, n = got["raw"], 2 + len(list(model.parameters()))
        expect(len(raw) == n, f"{what}: backward returned {len(raw)} values; forward had {n} arguments (module, x, "
                              "then one per parameter)")
        expect(raw[0] is None, f"{what}: the gradient for the module must be None")
        if not x.requires_grad:
            expect(raw[1] is None, f"{what}: x needs no gradient (ctx.needs_input_grad[1] is False): return None")
        for p, r in zip(model.parameters(), raw[2:]):
            if not p.requires_grad:
                expect(r is None, f"{what}: a frozen parameter needs no gradient: return None for it")
    what = "CheckpointFn around a model that itself checkpoints a block (nested checkpoints)"
    got = student.call("CheckpointFn", {"recipe": "case_07", "what": what}, observe="nested_07", what=what)
    expect_step(got, reference_step(cases.nested_07(None, 11), cases.input_07((4, 16), 11), 5), what)
    what = "a chain of 8 checkpointed blocks"
    got = student.call("CheckpointFn", {"recipe": "case_07", "what": what}, observe="chain_07", what=what)
    chain = cases.chain_07()
    expect_step(got, reference_step(chain, cases.input_07((3, 16), 12), 0, cases.chained_07(None, list(chain.children()))),
                what)
    _memory_and_recomputation(student)


def _memory_and_recomputation(student):
    what = "CheckpointFn on 6 blocks of width 64"
    got = student.call("CheckpointFn", {"recipe": "case_07", "what": what}, observe="memory_07", what=what)
    expect(got["type"] == "Tensor", f"{what}: expected a Tensor with a grad_fn, got {got['type']}")
    expect(got["forward_calls"] == 1, f"{what}: forward should run the module once, it ran {got['forward_calls']} "
                                      "times")
    activation = cases.case_07("memory")[2].detach().numpy().nbytes
    expect(got["kept"] <= activation,
           f"{what}: after forward {got['kept']} bytes more than the output are still allocated; keep only x (a "
           f"reference, not a copy), no activations and no graph (one activation is {activation} bytes)")
    expect(got["calls"] == 2, f"{what}: forward + backward ran the module {got['calls']} times; expected twice "
                              "(forward, then the recomputation in backward)")
    expect(got["again"], "a second backward through CheckpointFn worked: keep x with ctx.save_for_backward "
                         "(backward frees it), not as an attribute of ctx")
    expect(got["again"] == f"RuntimeError: {FREED_MESSAGE}",
           f"a second backward through CheckpointFn raised {got['again']}, expected the 'Trying to backward "
           "through the graph a second time' error")


@exercise("07_checkpointing:checkpoint_segments", forbids=("checkpoint_sequential",))
def checkpoint_segments(student):
    for name in ("seg8", "seg8_no_grad", "seg12_dropout"):
        description, model, x = cases.case_07(name)
        n = len(list(model.children()))
        ref = reference_step(model, x, 3)
        for boundaries in SEGMENT_CASES + (((3, 6, 9), (5, 11)) if n == 12 else ()):
            what = f"checkpoint_segments on {description}, boundaries {list(boundaries)}"
            got = student.call("checkpoint_segments", {"recipe": "case_07", "case": name, "boundaries": boundaries},
                               observe="segments_07", what=what)
            last = boundaries[-1] if boundaries else 0
            expected = [2] * last + [1] * (n - last)
            expect(got["calls"] == expected,
                   f"{what}: forward + backward called the layers {got['calls']} times; expected {expected} (layers "
                   "of checkpointed segments run twice, those of the last segment once). Recomputation that runs "
                   "other layers than its segment's usually means a function defined in a loop that reads the loop "
                   "variables later: give it its segment as an argument")
            expect_step(got, ref, what)
            bound = saved_bound(model, x, boundaries)
            expect(got["saved"] <= bound,
                   f"{what}: after forward {got['saved']} bytes are saved for backward; checkpointing keeps at most "
                   f"{bound} (each checkpointed segment's input and what the last segment saves). Run every segment "
                   "but the last through checkpoint(...), not the layers themselves")


def saved_bound(model, x, boundaries):
    """The most a checkpointed forward may keep for backward: the input of every checkpointed segment, and what
    the last segment, run normally, saves."""
    layers = list(model.children())
    with torch.no_grad():
        h, inputs = x, 0
        for start, end in zip((0, *boundaries), boundaries):
            inputs += h.numel() * h.element_size()
            for layer in layers[start:end]:
                h = layer(h)
    h = h.detach().requires_grad_(True)
    start = memory.saved()
    for layer in layers[boundaries[-1] if boundaries else 0:]:
        h = layer(h)
    return inputs + memory.saved() - start


def step_peaks(model, x):
    """The oracle: the peak of saved bytes over one whole checkpointed training step (forward and backward),
    and over its forward alone, for every s."""
    full, forward = {}, {}
    with cases.no_collection_07():
        for s in range(1, len(model) + 1):
            memory.reset_peak()
            start = memory.saved()
            out = checkpoint_sequential(model, s, x, use_reentrant=False)
            forward[s] = memory.max_saved() - start
            out.pow(2).mean().backward()
            full[s] = memory.max_saved() - start
            del out
    model.zero_grad(set_to_none=True)
    return full, forward


def budgets(peaks):
    """Below every peak, each peak (exactly: a peak fits its own budget), far above all."""
    values = sorted(set(peaks.values()))
    return [values[0] - 1, *values, 10 * peaks[1]]


def fewest(peaks, budget):
    fits = [s for s, p in peaks.items() if p <= budget]
    return min(fits) if fits else None


@exercise("07_checkpointing:choose_segments")
def choose_segments(student):
    for name in CHOOSE_CASES:
        description, model, x = cases.case_07(name)
        peaks, forward = step_peaks(model, x)
        for budget in budgets(peaks):
            expected = fewest(peaks, budget)
            what = f"choose_segments on {description}, budget {budget}"
            got = student.call("choose_segments", {"recipe": "case_07", "case": name, "budget": budget},
                               observe="choose_07", what=what)
            expect(got["type"] in ("int", "NoneType"), f"{what}: returned a {got['type']}, expected an int or None")
            hint = " The peak of forward alone is not the step's: backward recomputes each checkpointed segment." \
                if got["value"] == fewest(forward, budget) else ""
            expect(got["value"] == expected,
                   f"choose_segments on {description} with budget {budget} bytes: got {got['value']!r}, expected "
                   f"{expected!r}. The peaks of saved bytes for s = 1, 2, ... are {peaks}; return the smallest s "
                   f"whose peak is <= the budget (None if none is). Call memory.reset_peak() before each step."
                   + hint)
