"""Hidden tests of assignment 07_checkpointing: a checkpoint Function with edges to the parameters,
checkpointed segments of any length, and the fewest segments that fit a memory budget."""
import contextlib
import gc

import numpy as np

import chibigrad as torch
from chibigrad import memory, nn
from chibigrad.utils import checkpoint as checkpoint_module

from . import assert_close, call, expect, forbidden
from .contract import expect_freed, raw_backward

CHECKPOINT_YOURSELF = ("write the checkpoint Function yourself: do not call chibigrad's checkpoint, "
                       "checkpoint_sequential or CheckpointFunction")
SEQUENTIAL_YOURSELF = "cut the segments yourself: do not call chibigrad's checkpoint_sequential"


def _mlp(depth, width=16, dropout=0.0, seed=0):
    """``depth`` blocks (Linear, [Dropout], Tanh) in float64, as one flat nn.Sequential."""
    torch.manual_seed(seed)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width)] + ([nn.Dropout(dropout)] if dropout else []) + [nn.Tanh()]
    return nn.Sequential(*layers).double()


def _input(shape, seed, requires_grad=True):
    rng = np.random.default_rng(seed)
    return torch.tensor(rng.standard_normal(shape), requires_grad=requires_grad)


def _step(what, model, run, x, seed=0):
    """One training step: output, gradients of every parameter and of x, and what the generator draws next.
    Random numbers are drawn between forward and backward too (as a later dropout layer would)."""
    model.zero_grad(set_to_none=True)
    x.grad = None
    torch.manual_seed(seed)
    out = call(what, run, x)
    expect(isinstance(out, torch.Tensor), f"{what}: expected a Tensor, got {type(out).__name__}")
    torch.rand(3)
    call(f"backward of {what}", out.pow(2).mean().backward)
    after = torch.rand(4)._array
    return out.detach(), [p.grad for p in model.parameters()] + [x.grad], after


def _compare(what, got, ref):
    out, grads, after = got
    ref_out, ref_grads, ref_after = ref
    assert_close(out, ref_out._array, f"{what}: the output", rtol=1e-10, atol=1e-12)
    for k, (g, r) in enumerate(zip(grads, ref_grads)):
        name = "x" if k == len(grads) - 1 else f"parameter {k}"
        if r is None:
            expect(g is None, f"{what}: {name} needs no gradient, but its .grad is set")
            continue
        expect(g is not None, f"{what}: {name} got no gradient (.grad is None)")
        assert_close(g, r._array, f"{what}: the gradient of {name}", rtol=1e-9, atol=1e-12)
    expect(np.array_equal(after, ref_after), f"{what}: after backward the random generator is not where it would "
                                             "be without checkpointing (its next numbers repeat earlier ones); put it back after the "
                                             "recomputation")


class _Checkpointed(nn.Module):
    """A module whose forward runs ``inner`` through the student's Function (for nested checkpoints)."""

    def __init__(self, inner, fn):
        super().__init__()
        self.inner = inner
        self.fn = fn

    def forward(self, x):
        return self.fn.apply(self.inner, x, *self.inner.parameters())


def _counting(module):
    calls = [0]
    handle = module.register_forward_hook(lambda m, i, o: calls.__setitem__(0, calls[0] + 1))
    return calls, handle


def check_checkpoint_fn(CheckpointFn):
    blocked = [checkpoint_module.checkpoint, checkpoint_module.checkpoint_sequential,
               checkpoint_module.CheckpointFunction.forward, checkpoint_module.CheckpointFunction.backward]
    with forbidden(blocked, CHECKPOINT_YOURSELF):
        _check_checkpoint_fn(CheckpointFn)


def _apply(CheckpointFn, model):
    return lambda x: CheckpointFn.apply(model, x, *model.parameters())


def _check_checkpoint_fn(CheckpointFn):
    cases = [
        ("an MLP of 3 blocks", _mlp(3), _input((6, 16), 0)),
        ("an input that needs no gradient", _mlp(2, seed=1), _input((4, 16), 1, requires_grad=False)),
        ("an MLP with dropout 0.5", _mlp(3, dropout=0.5, seed=2), _input((8, 16), 2)),
        ("one input row", _mlp(1, seed=3), _input((1, 16), 3)),
    ]
    frozen = _mlp(3, seed=4)
    frozen[0].requires_grad_(False)
    cases.append(("an MLP whose first layer is frozen", frozen, _input((5, 16), 4)))
    for what, model, x in cases:
        what = f"CheckpointFn on {what}"
        ref = _step(f"{what} (without checkpointing)", model, model, x, seed=7)
        _compare(what, _step(what, model, _apply(CheckpointFn, model), x, seed=7), ref)
        params = [p for p in model.parameters() if p.requires_grad] + ([x] if x.requires_grad else [])
        torch.manual_seed(7)
        expected = torch.autograd.grad(model(x).pow(2).mean(), params)
        torch.manual_seed(7)
        out = call(what, CheckpointFn.apply, model, x, *model.parameters())
        expect(out.grad_fn is not None and out.grad_fn.name() == "CheckpointFnBackward",
               f"{what}: the output's grad_fn should be CheckpointFnBackward, got {out.grad_fn}")
        got = call(f"torch.autograd.grad(loss, parameters) through {what}", torch.autograd.grad,
                   out.pow(2).mean(), params, allow_unused=True)
        for k, (g, e) in enumerate(zip(got, expected)):
            expect(g is not None, f"{what}: torch.autograd.grad(loss, parameters) got None for input {k}: return "
                                  "the parameters' gradients from backward (don't call backward() inside)")
            assert_close(g, e._array, f"{what}: torch.autograd.grad(loss, parameters), input {k}", rtol=1e-9)
        out = call(what, CheckpointFn.apply, model, x, *model.parameters())
        raw = raw_backward(f"{what}: calling its backward", out)
        expect(len(raw) == 2 + len(list(model.parameters())),
               f"{what}: backward returned {len(raw)} values; forward had {2 + len(list(model.parameters()))} "
               "arguments (module, x, then one per parameter)")
        expect(raw[0] is None, f"{what}: the gradient for the module must be None")
        if not x.requires_grad:
            expect(raw[1] is None, f"{what}: x needs no gradient (ctx.needs_input_grad[1] is False): return None")
        for p, r in zip(model.parameters(), raw[2:]):
            if not p.requires_grad:
                expect(r is None, f"{what}: a frozen parameter needs no gradient: return None for it")
    _check_nested(CheckpointFn)
    _check_memory_and_recomputation(CheckpointFn)


def _check_nested(CheckpointFn):
    torch.manual_seed(11)
    inner = _mlp(2, dropout=0.3, seed=11)
    model = nn.Sequential(nn.Linear(16, 16), _Checkpointed(inner, CheckpointFn), nn.Tanh(), nn.Linear(16, 16)).double()
    x = _input((4, 16), 11)
    ref = _step("the nested model without the outer checkpoint", model, model, x, seed=5)
    _compare("CheckpointFn around a model that itself checkpoints a block (nested checkpoints)",
             _step("nested checkpoints", model, _apply(CheckpointFn, model), x, seed=5), ref)
    blocks = [_mlp(1, seed=20 + k) for k in range(8)]
    chain = nn.Sequential(*blocks)
    x = _input((3, 16), 12)

    def run(x):
        for block in blocks:
            x = CheckpointFn.apply(block, x, *block.parameters())
        return x
    _compare("a chain of 8 checkpointed blocks", _step("a chain of 8 checkpointed blocks", chain, run, x),
             _step("the chain without checkpointing", chain, chain, x))


def _check_memory_and_recomputation(CheckpointFn):
    model = _mlp(6, width=64, dropout=0.2, seed=30)
    x = _input((32, 64), 30)
    calls, handle = _counting(model)
    try:
        with memory.measure() as m:
            out = call("CheckpointFn on 6 blocks of width 64", CheckpointFn.apply, model, x, *model.parameters())
        expect(calls[0] == 1, f"forward should run the module once, it ran {calls[0]} times")
        kept = m.kept - out._array.nbytes
        expect(kept <= x._array.nbytes,
               f"CheckpointFn on 6 blocks of width 64: after forward {m.kept} bytes are still allocated, "
               f"{kept} more than the output; keep only x (a reference, not a copy), no activations and no graph "
               f"(one activation is {x._array.nbytes} bytes)")
        call("backward through CheckpointFn", out.sum().backward)
        expect(calls[0] == 2, f"forward + backward ran the module {calls[0]} times; expected twice (forward, "
                              "then the recomputation in backward)")
    finally:
        handle.remove()
    expect_freed("CheckpointFn", lambda: out.sum().backward(),
                 "a second backward through CheckpointFn worked: keep x with ctx.save_for_backward (backward frees "
                 "it), not as an attribute of ctx",
                 raised=lambda err: f"a second backward through CheckpointFn raised {err!r}, expected the 'Trying "
                                    "to backward through the graph a second time' error")


# ---- Exercise 2: checkpoint_segments ---------------------------------------------------------------------------------

SEGMENT_CASES = ((), (1,), (4,), (7,), (2, 5), (3, 4), (1, 2, 3, 4, 5, 6, 7))  # tuples: no submission can edit them


def check_checkpoint_segments(checkpoint_segments):
    blocked = [checkpoint_module.checkpoint_sequential, checkpoint_module._segment]
    with forbidden(blocked, SEQUENTIAL_YOURSELF):
        _check_checkpoint_segments(checkpoint_segments)


def _check_checkpoint_segments(checkpoint_segments):
    for what, model, x in [("an MLP of 8 layers", _mlp(4, seed=40), _input((5, 16), 40)),
                           ("an MLP of 8 layers and an input that needs no gradient", _mlp(4, seed=41),
                            _input((5, 16), 41, requires_grad=False)),
                           ("an MLP of 12 layers with dropout", _mlp(4, dropout=0.5, seed=42), _input((6, 16), 42))]:
        layers = list(model.children())
        ref = _step(f"{what} without checkpointing", model, model, x, seed=3)
        cases = SEGMENT_CASES + (((3, 6, 9), (5, 11)) if len(layers) == 12 else ())
        for boundaries in cases:
            case = f"checkpoint_segments on {what}, boundaries {list(boundaries)}"
            counters = [_counting(layer) for layer in layers]
            try:
                got = _step(case, model, lambda x, b=list(boundaries): checkpoint_segments(layers, b, x), x, seed=3)
            finally:
                for _, handle in counters:
                    handle.remove()
            last = boundaries[-1] if boundaries else 0
            expected = [2] * last + [1] * (len(layers) - last)
            calls = [c[0] for c, _ in counters]
            expect(calls == expected,
                   f"{case}: forward + backward called the layers {calls} times; expected {expected} (layers of "
                   "checkpointed segments run twice, those of the last segment once). Recomputation that runs "
                   "other layers than its segment's usually means a function defined in a loop that reads the "
                   "loop variables later: give it its segment as an argument")
            _compare(case, got, ref)


# ---- Exercise 3: choose_segments -------------------------------------------------------------------------------------

@contextlib.contextmanager
def _no_collection():
    """No cyclic garbage collection inside: freeing old graphs mid-step would shift the measured peaks."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _peaks(model, x):
    """The oracle: the saved-bytes peak of one checkpointed training step for every s."""
    peaks = {}
    for s in range(1, len(model) + 1):
        memory.reset_peak()
        start = memory.saved()
        out = checkpoint_module.checkpoint_sequential(model, s, x, use_reentrant=False)
        out.pow(2).mean().backward()
        peaks[s] = memory.max_saved() - start
        del out
    model.zero_grad(set_to_none=True)
    return peaks


def _wide_then_narrow():
    torch.manual_seed(50)
    return nn.Sequential(nn.Linear(16, 96), nn.Tanh(), nn.Linear(96, 96), nn.Tanh(), nn.Linear(96, 16), nn.Tanh(),
                         nn.Linear(16, 16)).double()


def check_choose_segments(choose_segments):
    with _no_collection():
        _check_choose_segments(choose_segments)


def _check_choose_segments(choose_segments):
    models = [("12 layers of width 32", _mlp(6, width=32, seed=51), _input((16, 32), 51, requires_grad=False)),
              ("15 layers with dropout", _mlp(5, width=24, dropout=0.1, seed=52), _input((8, 24), 52)),
              ("7 layers of different widths", _wide_then_narrow(), _input((12, 16), 53, requires_grad=False))]
    for what, model, x in models:
        peaks = _peaks(model, x)
        lowest = min(peaks.values())
        budgets = sorted(set(peaks.values()))
        budgets = sorted({lowest - 1, *budgets, *[(a + b) // 2 for a, b in zip(budgets, budgets[1:])],
                          10 * peaks[1]})
        for budget in budgets:
            fits = [s for s, p in peaks.items() if p <= budget]
            expected = min(fits) if fits else None
            got = call(f"choose_segments on {what}, budget {budget}", choose_segments, model, x, budget)
            shown = {s: p for s, p in peaks.items()}
            expect(got == expected,
                   f"choose_segments on {what} with budget {budget} bytes: got {got!r}, expected {expected!r}. The "
                   f"peaks of saved bytes for s = 1, 2, ... are {shown}; return the smallest s whose peak is <= the "
                   "budget (None if none is). Call memory.reset_peak() before each step.")
