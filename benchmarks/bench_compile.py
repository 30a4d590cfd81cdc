"""chibigrad.compile against its floors, in one process with one BLAS thread:

1. the MLP step of bench_mlp_step.py (784-256-256-10, batch 128, zero_grad + forward +
   cross-entropy + backward + SGD step), compiled, against the same hand-written numpy floor;
   budget <= 1.00x (eager chibigrad: <= 1.30x; PyTorch eager 1.15x);
2. the tiny chain ``y = y * w + b`` (2,000 steps on shape (4,), then ``y.sum().backward()``),
   compiled, per op against one plain numpy op; budget <= 4x (eager: <= 45x);
3. compile time, and memory: the compiled step's tracemalloc peak against eager's, and the
   rematerialisation pass against chapter 7's checkpointing on a deeper net (SiLU written out).

Every compiled result is checked against eager first (bitwise: same numpy calls, same order).

    python benchmarks/bench_compile.py [--quick]
"""
import sys
import time
import timeit
import tracemalloc

from _common import QUICK, interleaved, report  # sets one BLAS thread before numpy loads

import numpy as np

import chibigrad as torch
import chibigrad.nn.functional as F
from bench_mlp_step import BATCH, LR, SIZES, NumpyMLP
from chibigrad import memory, nn, optim
from chibigrad.compile import passes
from chibigrad.utils.checkpoint import checkpoint

STEPS = 50 if QUICK else 2000
REPEATS, WARMUP, BLOCK = (3, 1, 2) if QUICK else (200, 20, 25)
DEPTH, WIDTH, DEEP_BATCH = (4, 16, 32) if QUICK else (16, 256, 256)
MB = 2 ** 20


def mlp(sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers += [nn.Linear(sizes[i], sizes[i + 1]), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def train_step(model, optimizer):
    def step(x, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss
    return step


def same_state(a, b):
    return all(np.array_equal(p.detach().numpy(), q.detach().numpy()) and np.array_equal(p.grad.numpy(), q.grad.numpy())
               for p, q in zip(a.parameters(), b.parameters()))


def bench_mlp():
    torch.manual_seed(0)
    model = mlp(SIZES)
    torch.manual_seed(0)
    twin = mlp(SIZES)
    floor = NumpyMLP([p.detach().numpy() for p in model.parameters()])
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((BATCH, SIZES[0]), dtype=np.float32)
    y_np = rng.integers(0, SIZES[3], BATCH)
    x, y = torch.from_numpy(x_np), torch.from_numpy(y_np)
    eager = train_step(twin, optim.SGD(twin.parameters(), lr=LR))
    start = time.perf_counter()
    compiled = torch.compile(train_step(model, optim.SGD(model.parameters(), lr=LR)))
    for _ in range(3):  # step 1 traces, step 2 traces again (grads exist now), step 3 replays
        loss_c, loss_e = compiled(x, y), eager(x, y)
    seconds = time.perf_counter() - start
    same = loss_c.item() == loss_e.item() and same_state(model, twin)
    print(f"MLP {'-'.join(map(str, SIZES))}, batch {BATCH}: compiled {compiled.compile_count} times "
          f"({seconds:.2f} s for the first 3 steps), {len(compiled.graph.nodes)} graph nodes; "
          f"bitwise equal to eager after 3 steps: {'yes' if same else 'NO'}")

    steps = {"numpy": lambda: floor.step(x_np, y_np), "compiled": lambda: compiled(x, y),
             "eager": lambda: eager(x, y)}
    interleaved(steps, WARMUP)
    median = interleaved(steps, REPEATS)
    print(f"median step: numpy floor {median['numpy'] * 1e3:.3f} ms, compiled {median['compiled'] * 1e3:.3f} ms, "
          f"eager {median['eager'] * 1e3:.3f} ms ({REPEATS} interleaved repetitions, one BLAS thread)")
    guard_cost(compiled, (x, y), median["compiled"])
    report("compiled / numpy floor", median["compiled"] / median["numpy"], target=1.00)
    report("eager / numpy floor", median["eager"] / median["numpy"])
    blocks = interleaved(steps, max(REPEATS // BLOCK, 1), block=BLOCK)
    report(f"compiled / numpy floor, in blocks of {BLOCK} steps", blocks["compiled"] / blocks["numpy"], target=1.00)
    report(f"eager / numpy floor, in blocks of {BLOCK} steps", blocks["eager"] / blocks["numpy"])

    peaks = {}
    for name in ("numpy", "compiled", "eager"):
        tracemalloc.start()
        steps[name]()
        peaks[name] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    print(f"tracemalloc peak of one step: numpy floor {peaks['numpy'] / MB:.2f} MB, compiled "
          f"{peaks['compiled'] / MB:.2f} MB (+ {_buffer_bytes(compiled) / MB:.2f} MB of buffers and constants kept "
          f"between steps), eager {peaks['eager'] / MB:.2f} MB")
    return same


def _buffer_bytes(compiled):
    return sum(n.value.nbytes for n in compiled.graph.nodes if n.op in ("buffer", "constant"))


def chain(y0, w, b):
    y0.grad = w.grad = b.grad = None
    y = y0
    for _ in range(STEPS):
        y = y * w + b
    y.sum().backward()


def numpy_chain(y0, w, b):
    y = y0
    for _ in range(STEPS):
        y = y * w + b


def guard_cost(compiled, args, call_seconds):
    """What checking the guards costs per call (the fastest of a few runs), against the whole call."""
    guard = compiled._latest.guard
    assert guard(args, {}) is not None
    best = min(timeit.repeat(lambda: guard(args, {}), number=1000, repeat=5)) / 1000
    checks = compiled.guards.count(": return None")
    print(f"guard: {best * 1e6:.2f} us per call ({checks} checks), {best / call_seconds:.2%} of the compiled call")


def bench_tiny_chain():
    torch.manual_seed(0)
    y0 = torch.rand(4, requires_grad=True)
    w = (torch.rand(4) * 0.5).requires_grad_()
    b = torch.rand(4, requires_grad=True)
    arrays = [t.detach().numpy().copy() for t in (y0, w, b)]
    compiled = torch.compile(chain)
    start = time.perf_counter()
    compiled(y0, w, b)
    first = time.perf_counter() - start
    compiled(y0, w, b)  # the grads exist now: traced again
    grads = [t.grad.numpy().copy() for t in (y0, w, b)]
    compiled(y0, w, b)
    replayed = [t.grad.numpy().copy() for t in (y0, w, b)]
    chain(y0, w, b)
    same = all(np.array_equal(g, t.grad.numpy()) and np.array_equal(r, g) for g, r, t in zip(grads, replayed,
                                                                                             (y0, w, b)))
    print(f"tiny chain: {STEPS} steps ({2 * STEPS} ops) on shape (4,): first call (trace + code generation) "
          f"{first:.2f} s, {len(compiled.graph.nodes)} graph nodes, {len(compiled.code.splitlines())} lines of code; "
          f"gradients bitwise equal to eager: {'yes' if same else 'NO'}")
    runs = {"compiled": lambda: compiled(y0, w, b), "eager": lambda: chain(y0, w, b),
            "numpy": lambda: numpy_chain(*arrays)}
    median = interleaved(runs, 5 if QUICK else 20)
    per_op = {name: seconds / (2 * STEPS) for name, seconds in median.items()}
    print(f"per op: numpy {per_op['numpy'] * 1e6:.2f} us; compiled {per_op['compiled'] * 1e6:.2f} us, eager "
          f"{per_op['eager'] * 1e6:.2f} us (forward + backward)")
    guard_cost(compiled, (y0, w, b), median["compiled"])
    report("compiled op / numpy op", per_op["compiled"] / per_op["numpy"], target=4)
    report("eager op / numpy op", per_op["eager"] / per_op["numpy"])
    return same


class SiLUNet(nn.Module):
    """Linear layers with SiLU written out (z * sigmoid(z)): element-wise values that backward
    reads, the case rematerialisation is for."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(WIDTH, WIDTH) for _ in range(DEPTH)])

    def forward(self, x):
        for layer in self.layers:
            z = layer(x)
            x = z * torch.sigmoid(z)
        return x


def bench_rematerialisation():
    """Chapter 7's question again: memory held between forward and backward. Eager: peak
    tensor data plain and with checkpoint_sequential; compiled: the peak of the generated
    program (it frees each value after its last use), without and with rematerialisation."""
    torch.manual_seed(0)
    model = SiLUNet()
    x = torch.randn(DEEP_BATCH, WIDTH)

    def step(x_):
        model.zero_grad()
        model(x_).mean().backward()

    def checkpointed(x_):
        model.zero_grad()
        segments = [nn.Sequential(*model.layers[i:i + DEPTH // 4]) for i in range(0, DEPTH, DEPTH // 4)]
        h = x_
        for segment in segments:
            h = checkpoint(lambda t, s=segment: _silu_segment(s, t), h, use_reentrant=False)
        h.mean().backward()

    eager_peaks = {}
    for name, fn in (("plain", step), ("checkpointed", checkpointed)):
        base = memory.allocated()
        memory.reset_peak()
        fn(x)
        eager_peaks[name] = memory.max_allocated() - base
    compiled_peaks, measured, counts, times = {}, {}, {}, {}
    for remat in (False, True):
        compiled = torch.compile(step, options={"rematerialize": remat, "reuse_buffers": False})
        for _ in range(3):
            compiled(x)
        compiled_peaks[remat] = passes.peak_bytes(compiled.graph)
        counts[remat] = compiled.code.count("_recomputed = ")
        tracemalloc.start()
        compiled(x)
        measured[remat] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        times[remat] = interleaved({"step": lambda c=compiled: c(x)}, 3 if QUICK else 10)["step"]
    print(f"{DEPTH} x (Linear({WIDTH}, {WIDTH}) + SiLU as z * sigmoid(z)), batch {DEEP_BATCH}; one activation "
          f"{DEEP_BATCH * WIDTH * 4 / MB:.2f} MB")
    print(f"eager peak tensor data: plain {eager_peaks['plain'] / MB:.1f} MB, checkpointed in 4 segments "
          f"{eager_peaks['checkpointed'] / MB:.1f} MB")
    print(f"compiled peak: {compiled_peaks[False] / MB:.1f} MB, rematerialised {compiled_peaks[True] / MB:.1f} MB "
          f"({counts[True]} ops recomputed in backward); tracemalloc {measured[False] / MB:.1f} MB and "
          f"{measured[True] / MB:.1f} MB; step {times[False] * 1e3:.1f} ms and {times[True] * 1e3:.1f} ms")
    report("compiled rematerialised / compiled peak", compiled_peaks[True] / compiled_peaks[False])
    report("eager checkpointed / eager peak", eager_peaks["checkpointed"] / eager_peaks["plain"])


def _silu_segment(segment, x):
    for layer in segment:
        z = layer(x)
        x = z * torch.sigmoid(z)
    return x


def main():
    ok = bench_mlp()
    ok = bench_tiny_chain() and ok
    bench_rematerialisation()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
