"""CPU against GPU: time per training step of an MLP over model sizes, and GPU memory with checkpointing.

The network: ``DEPTH`` x (Linear(width, width) + ReLU), then Linear(width, 10), cross-entropy and
an SGD step, float32, batch ``BATCH``, for every width in ``WIDTHS``. It runs, where each is
available:

- chibigrad on the CPU (numpy; BLAS with its default number of threads, the fair opponent of a GPU),
- chibigrad on CUDA (CuPy arrays; ``pip install -r requirements-gpu.txt``), eager and compiled
  (``chibigrad.compile`` of the whole step: the generated program runs on the device),
- PyTorch on CUDA (and on the CPU), when ``torch`` imports (it is not in requirements.txt), eager and
  as a whole-step CUDA graph (PyTorch's documented "whole network capture": forward, backward and
  ``optimizer.step()`` captured once with ``torch.cuda.graph``, then replayed: one launch a step).

Then the peak GPU memory of one training step of a deeper network with and without
``checkpoint_sequential`` (``chibigrad.cuda.max_memory_allocated``, ``torch.cuda.max_memory_allocated``),
and the same for chibigrad on the CPU (``chibigrad.memory.max_allocated``).

Timing a GPU needs ``synchronize()`` before reading the clock, at both ends; see ``time_step``.

    python benchmarks/bench_gpu.py [--quick] [--record] [--widths 64,256,1024] [--json]

Without a GPU it measures the CPU parts and says the GPU parts were skipped. ``--record`` (only on a
real CUDA device, never the simulated one) writes the numbers, the date, the device's name and the
library versions to ``book/data/gpu_benchmark.json``, which chapter 9 plots; otherwise it only prints.
"""
import datetime
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

QUICK = "--quick" in sys.argv or os.environ.get("CHIBIGRAD_BENCH_QUICK") == "1"
RECORD = "--record" in sys.argv
OUTPUT = ROOT / "book" / "data" / "gpu_benchmark.json"
SCHEMA = "chibigrad-gpu-benchmark/1"

import numpy as np  # noqa: E402 - BLAS keeps its default thread count here (no _common import)

try:
    import chibigrad as cg
    from chibigrad import nn, optim
    import chibigrad.nn.functional as F
    from chibigrad.utils.checkpoint import checkpoint_sequential
    nn.Sequential, nn.Linear, nn.ReLU, optim.SGD, F.cross_entropy  # noqa: B018 - all needed below
except (ImportError, AttributeError) as err:
    sys.exit(f"bench_gpu: chibigrad.nn / optim are not available yet ({err}); nothing measured.")

try:  # optional: the reference implementation
    import torch as pt
except ImportError:
    pt = None

if QUICK:
    WIDTHS, BATCH, DEPTH, MIN_REPEATS, MIN_SECONDS, WARMUP = (16, 32), 16, 2, 1, 0.0, 1
    MEM_WIDTH, MEM_BATCH, MEM_DEPTH, MEM_SEGMENTS = 16, 32, 4, 2
else:
    WIDTHS, BATCH, DEPTH, MIN_REPEATS, MIN_SECONDS, WARMUP = (64, 128, 256, 512, 1024, 2048, 4096), 256, 3, 5, 1.0, 3
    MEM_WIDTH, MEM_BATCH, MEM_DEPTH, MEM_SEGMENTS = 1024, 4096, 16, 4
if "--widths" in sys.argv:
    WIDTHS = tuple(int(w) for w in sys.argv[sys.argv.index("--widths") + 1].split(","))
CLASSES, LR = 10, 0.01
SIMULATED_NAME = "chibigrad simulated CUDA device"


# ----------------------------------------------------------------------------------------------
# What is available

def chibigrad_cuda():
    """'real', 'simulated' or None: whether chibigrad can run on CUDA here, and on what."""
    cuda = getattr(cg, "cuda", None)
    if cuda is None or not cuda.is_available():
        return None
    simulated = cuda.is_simulated() if hasattr(cuda, "is_simulated") else cuda.get_device_name() == SIMULATED_NAME
    return "simulated" if simulated else "real"


def torch_cuda():
    return pt is not None and pt.cuda.is_available()


# ----------------------------------------------------------------------------------------------
# The model and one training step, in chibigrad and in PyTorch (same names, same code)

def make_mlp(lib, width, depth):
    layers = []
    for _ in range(depth):
        layers += [lib.nn.Linear(width, width), lib.nn.ReLU()]
    return lib.nn.Sequential(*layers, lib.nn.Linear(width, CLASSES))


def weights_of(model):
    """The parameters as host numpy arrays: the `.detach().cpu().numpy()` rule."""
    return [p.detach().cpu().numpy() for p in model.parameters()]


def load_weights(lib, model, arrays):
    with lib.no_grad():
        for p, a in zip(model.parameters(), arrays):
            p.copy_(lib.tensor(a, device=p.device))


class Setup:
    """A model, its optimizer and one batch on ``device``, built from the same host weights and data;
    ``mode`` is how a step runs: "eager", "compiled" (chibigrad.compile) or "cuda-graph" (PyTorch)."""

    def __init__(self, lib, device, width, weights, x, y, mode="eager"):
        self.lib, self.device = lib, device
        self.model = make_mlp(lib, width, DEPTH).to(device)
        load_weights(lib, self.model, weights)
        self.optimizer = lib.optim.SGD(self.model.parameters(), lr=LR)
        self.x = lib.tensor(x, device=device)
        self.y = lib.tensor(y, device=device)
        self.run = training_step(lib, self.model, self.optimizer)
        if mode == "compiled":
            self.run = lib.compile(self.run)
        elif mode == "cuda-graph":
            self.run = self.capture()
            load_weights(lib, self.model, weights)  # the warm-up steps changed them; copy_ keeps the addresses

    def step(self):
        """One training step. It reads nothing back (no .item()): that would synchronise by itself."""
        return self.run(self.x, self.y)

    def capture(self):
        """The whole step as one CUDA graph (PyTorch's docs, CUDA Graphs, "whole network capture"):
        warm up on a side stream, capture forward, backward and the update once, replay it after.
        A replay launches the step's kernels in one call, with the same inputs and memory."""
        cuda, step = self.lib.cuda, self.run
        side = cuda.Stream()
        side.wait_stream(cuda.current_stream())
        with cuda.stream(side):
            for _ in range(3):
                step(self.x, self.y)
        cuda.current_stream().wait_stream(side)
        graph = cuda.CUDAGraph()
        self.optimizer.zero_grad(set_to_none=True)
        with cuda.graph(graph):
            loss = self.lib.nn.functional.cross_entropy(self.model(self.x), self.y)
            loss.backward()
            self.optimizer.step()

        def replay(x, y):  # the captured x and y: a replay reads the same memory
            graph.replay()
            return loss
        return replay

    def synchronize(self):
        if self.lib.device(self.device).type == "cuda":
            self.lib.cuda.synchronize()


def training_step(lib, model, optimizer):
    cross_entropy = lib.nn.functional.cross_entropy

    def step(x, y):
        optimizer.zero_grad()
        loss = cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss
    return step


def time_step(setup, synchronize=True):
    """Median wall-clock seconds of one training step.

    A GPU runs asynchronously: every CUDA operation only *queues* a kernel and returns at once,
    long before the kernel has run. Reading the clock right after ``step()`` would measure how
    fast Python can queue work, and the queued work would be billed to whatever waits for the
    GPU next (a ``.item()``, a copy to the host, the next timing). So we wait for the GPU,
    ``synchronize()``, before starting the clock (nothing earlier may still be running) and
    again before stopping it (everything the step queued has finished). On the CPU
    ``synchronize`` is not needed (numpy computes before it returns); we call the same code.
    Wall-clock time, not CPU time: the CPU mostly waits while the GPU works.
    ``synchronize=False`` measures the mistake, for the book: the time to queue one step.
    """
    for _ in range(WARMUP):  # CuPy compiles its kernels on first use; the allocator warms its pool
        setup.step()
    times = []
    while len(times) < MIN_REPEATS or sum(times) < MIN_SECONDS:
        setup.synchronize()
        start = time.perf_counter()
        setup.step()
        if synchronize:
            setup.synchronize()
        times.append(time.perf_counter() - start)
    setup.synchronize()
    return statistics.median(times)


# ----------------------------------------------------------------------------------------------
# Peak memory of one step, with and without checkpointing

def peak_step_memory(lib, device, checkpointed):
    """Peak bytes allocated during one forward + backward, above what was allocated before it."""
    lib.manual_seed(0)
    model = make_mlp(lib, MEM_WIDTH, MEM_DEPTH).to(device)
    x = lib.randn(MEM_BATCH, MEM_WIDTH, device=device)
    y = lib.randint(0, CLASSES, (MEM_BATCH,), device=device)
    for p in model.parameters():  # gradients exist before we measure: the peak counts activations
        p.grad = lib.zeros_like(p)
    on_cuda = lib.device(device).type == "cuda"
    if on_cuda:
        lib.cuda.synchronize()
        lib.cuda.reset_peak_memory_stats()
        base = lib.cuda.memory_allocated()
    else:  # chibigrad only: PyTorch has no such counter for the CPU
        lib.memory.reset_peak()
        base = lib.memory.allocated()
    if checkpointed:
        out = checkpoint_sequential_of(lib)(model, MEM_SEGMENTS, x, use_reentrant=False)
    else:
        out = model(x)
    lib.nn.functional.cross_entropy(out, y).backward()
    if on_cuda:
        lib.cuda.synchronize()
        return lib.cuda.max_memory_allocated() - base
    return lib.memory.max_allocated() - base


def checkpoint_sequential_of(lib):
    if lib is cg:
        return checkpoint_sequential
    import torch.utils.checkpoint
    return torch.utils.checkpoint.checkpoint_sequential


# ----------------------------------------------------------------------------------------------

def versions():
    found = {"python": platform.python_version(), "numpy": np.__version__,
             "chibigrad": getattr(cg, "__version__", "?")}
    try:
        import cupy
        found["cupy"] = cupy.__version__
        found["cuda_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
    except Exception:  # noqa: BLE001 - not installed, or installed without a usable CUDA
        pass
    if pt is not None:
        found["torch"] = pt.__version__
        found["torch_cuda"] = pt.version.cuda
    return found


def cpu_name():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main():
    kind = chibigrad_cuda()
    if RECORD and QUICK:
        sys.exit("bench_gpu: --record with --quick would record tiny sizes whose numbers mean nothing. Nothing written.")
    if RECORD and kind != "real":
        sys.exit("bench_gpu: --record needs a real CUDA device (chibigrad.cuda.is_available() with CuPy); "
                 f"here chibigrad's CUDA is {kind or 'not available'}. Nothing written.")

    # Which runs: (name, library, device, mode). The CPU run of chibigrad always.
    runs = [("chibigrad-cpu", cg, "cpu", "eager")]
    if kind:
        runs += [("chibigrad-cuda", cg, "cuda", "eager"), ("chibigrad-cuda-compiled", cg, "cuda", "compiled")]
    if torch_cuda():
        runs += [("torch-cuda", pt, "cuda", "eager"), ("torch-cuda-graph", pt, "cuda", "cuda-graph")]
    if pt is not None:
        runs.append(("torch-cpu", pt, "cpu", "eager"))
    gpu_name = cg.cuda.get_device_name() if kind else None
    if kind == "simulated":
        print(f"CUDA in chibigrad: {gpu_name} (numpy arrays standing in for a GPU: "
              "its times are CPU times and mean nothing about GPUs)")
    elif kind == "real":
        print(f"CUDA device: {gpu_name}")
    skipped = [name for name, ok in (("chibigrad on CUDA", kind), ("PyTorch on CUDA", torch_cuda())) if not ok]
    if skipped:
        why = "no CUDA device" if not kind else "torch not installed or without CUDA"
        print(f"GPU parts skipped ({why}): {', '.join(skipped)}")
    threads = os.environ.get("OMP_NUM_THREADS") or os.environ.get("OPENBLAS_NUM_THREADS") or "default"
    print(f"MLP {DEPTH} x (Linear(w, w) + ReLU) + Linear(w, {CLASSES}), batch {BATCH}, float32, SGD; "
          f"CPU: {cpu_name()}, {os.cpu_count()} cores, BLAS threads {threads}")

    rng = np.random.default_rng(0)
    step_seconds = {name: [] for name, *_ in runs}
    unsynchronized = {name: [] for name, _, device, _ in runs if device == "cuda"}
    first_loss = {name: [] for name, *_ in runs}
    agree = True
    for width in WIDTHS:
        cg.manual_seed(width)
        weights = weights_of(make_mlp(cg, width, DEPTH))
        x = rng.standard_normal((BATCH, width), dtype=np.float32)
        y = rng.integers(0, CLASSES, BATCH)
        losses = {}
        for name, lib, device, mode in runs:
            setup = Setup(lib, device, width, weights, x, y, mode)
            losses[name] = setup.step().item()  # the same first step everywhere (.item() waits for the GPU)
            load_weights(lib, setup.model, weights)
            step_seconds[name].append(time_step(setup))
            if name in unsynchronized:
                unsynchronized[name].append(time_step(setup, synchronize=False))
            first_loss[name].append(losses[name])
            del setup
        same = all(np.isclose(v, losses["chibigrad-cpu"], rtol=1e-4, atol=1e-5) for v in losses.values())
        agree &= bool(same)
        cells = "  ".join(f"{name} {step_seconds[name][-1] * 1e3:9.3f} ms" for name, *_ in runs)
        print(f"width {width:5}: {cells}  (same first loss: {'yes' if same else 'NO'})")

    for name, times in unsynchronized.items():
        print(f"{name} timed WITHOUT synchronize (wrong): " +
              ", ".join(f"{w}: {t * 1e3:.3f} ms" for w, t in zip(WIDTHS, times)))
    for name, *_ in runs[1:]:
        ratios = [c / g for c, g in zip(step_seconds["chibigrad-cpu"], step_seconds[name])]
        print(f"chibigrad-cpu / {name}: " + ", ".join(f"{w}: {r:.2f}x" for w, r in zip(WIDTHS, ratios)))
    if "torch-cuda" in step_seconds:  # the goals: chibigrad eager <= 2x, compiled <= 1x PyTorch eager
        for name in ("chibigrad-cuda", "chibigrad-cuda-compiled", "torch-cuda-graph"):
            ratios = [c / t for c, t in zip(step_seconds.get(name, []), step_seconds["torch-cuda"])]
            if ratios:
                print(f"{name} / torch-cuda: " + ", ".join(f"{w}: {r:.2f}x" for w, r in zip(WIDTHS, ratios)))

    print(f"peak memory of one step, {MEM_DEPTH} x (Linear({MEM_WIDTH}, {MEM_WIDTH}) + ReLU), batch {MEM_BATCH}, "
          f"plain / checkpoint_sequential in {MEM_SEGMENTS} segments:")
    memory = {}
    mem_runs = [(name, lib, device) for name, lib, device, mode in runs if mode == "eager" and name != "torch-cpu"]
    for name, lib, device in mem_runs:
        plain = peak_step_memory(lib, device, checkpointed=False)
        ckpt = peak_step_memory(lib, device, checkpointed=True)
        memory[name] = {"plain_bytes": int(plain), "checkpointed_bytes": int(ckpt)}
        print(f"  {name:15} {plain / 2**20:9.1f} MiB  {ckpt / 2**20:9.1f} MiB  "
              f"(checkpointed / plain: {ckpt / plain:.2f})")
    if kind != "real":
        print("no GPU numbers measured; on a CUDA machine: python benchmarks/bench_gpu.py --record")

    result = {
        "schema": SCHEMA,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device": gpu_name,
        "cpu": {"name": cpu_name(), "cores": os.cpu_count(), "blas_threads": threads},
        "versions": versions(),
        "step": {"depth": DEPTH, "batch": BATCH, "classes": CLASSES, "dtype": "float32", "optimizer": "SGD",
                 "widths": list(WIDTHS), "statistic": "median wall-clock seconds, synchronised",
                 "seconds": step_seconds, "first_loss": first_loss,
                 "seconds_without_synchronize": unsynchronized},
        "memory": {"depth": MEM_DEPTH, "width": MEM_WIDTH, "batch": MEM_BATCH, "segments": MEM_SEGMENTS,
                   "statistic": "peak bytes allocated during forward + backward above the bytes before it",
                   "bytes": memory},
        "checks": {"same_first_loss": agree},
    }
    if pt is not None:
        result["torch_allow_tf32"] = bool(pt.backends.cuda.matmul.allow_tf32)
    if RECORD:
        OUTPUT.parent.mkdir(parents=True, exist_ok=True)
        OUTPUT.write_text(json.dumps(result, indent=1) + "\n")
        print(f"recorded: {OUTPUT.relative_to(ROOT)}")
    elif "--json" in sys.argv:
        print(json.dumps(result, indent=1))
    print(f"same first loss on every device: {'yes' if agree else 'NO'}")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
