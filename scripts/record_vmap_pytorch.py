"""Record what chapter 6c measures, under PyTorch, so the page prints PyTorch's numbers beside chibigrad's.

    /path/to/python-with-torch scripts/record_vmap_pytorch.py

Writes book/data/vmap_pytorch.json: per-sample gradients of an MLP 784-128-10 (batch 64, float32)
three ways (a loop of ``torch.func.grad`` calls, the module run on batches of one with
``backward``, ``vmap(grad)``), the Jacobian of f: R^100 -> R^100 by 100 products one at a time
against ``jacrev``/``jacfwd`` (one vmapped pass) and one batched VJP, the warning of vmap's
fallback, and how a BatchedTensor prints. The cases are benchmarks/bench_vmap.py's; timings are CPU seconds of one thread,
medians of repeated runs after a warm-up, with their spread.
"""
import json
import platform
import statistics
import time
import warnings
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, jacfwd, jacrev, jvp, vjp, vmap

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "book" / "data" / "vmap_pytorch.json"
BATCH, SIZES, N = 64, (784, 128, 10), 100


def timing(fn, runs=15, warmup=2):
    """Median, min and max CPU seconds of ``runs`` calls after ``warmup`` uncounted ones."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return {"median": statistics.median(times), "min": min(times), "max": max(times), "runs": runs}


def per_sample_gradients():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(SIZES[0], SIZES[1]), torch.nn.ReLU(),
                                torch.nn.Linear(SIZES[1], SIZES[2]))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = torch.randn(BATCH, SIZES[0]), torch.randint(0, SIZES[2], (BATCH,))

    def loss(params, sample, target):
        return F.cross_entropy(functional_call(model, params, (sample.unsqueeze(0),)), target.unsqueeze(0))

    def loop():
        grads = [grad(loss)(params, x[i], y[i]) for i in range(BATCH)]
        return {k: torch.stack([g[k] for g in grads]) for k in params}

    def batch_of_one():
        grads = {k: [] for k in params}
        for i in range(BATCH):
            model.zero_grad()
            F.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
            for k, p in model.named_parameters():
                grads[k].append(p.grad.clone())
        return {k: torch.stack(g) for k, g in grads.items()}

    def vmapped():
        return vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)

    same = all(torch.allclose(loop()[k], v, atol=1e-6) and torch.allclose(batch_of_one()[k], v, atol=1e-6)
               for k, v in vmapped().items())
    return {"batch": BATCH, "sizes": list(SIZES), "same": same,
            "loop": timing(loop, runs=7), "batch_of_one": timing(batch_of_one, runs=7), "vmap": timing(vmapped)}


def jacobians():
    torch.manual_seed(0)
    w1, w2 = torch.randn(N, N) / N ** 0.5, torch.randn(N, N) / N ** 0.5

    def f(x):
        return torch.tanh(w2 @ torch.tanh(w1 @ x))

    x, xs, cotangents = torch.randn(N), torch.randn(N, N), torch.randn(N, N)

    def rows_one_by_one():
        _, vjp_fn = vjp(f, x)
        return torch.stack([vjp_fn(e)[0] for e in torch.eye(N)])

    def columns_one_by_one():
        return torch.stack([jvp(f, (x,), (e,))[1] for e in torch.eye(N)], dim=1)

    def batched_vjp():  # f on N inputs, one backward with N cotangents
        _, vjp_fn = vjp(lambda b: torch.tanh(torch.tanh(b @ w1.T) @ w2.T), xs)
        return vjp_fn(cotangents)

    same = (torch.allclose(jacrev(f)(x), rows_one_by_one(), atol=1e-6)
            and torch.allclose(jacfwd(f)(x), columns_one_by_one(), atol=1e-6))
    return {"n": N, "same": same, "rows": timing(rows_one_by_one), "jacrev": timing(lambda: jacrev(f)(x)),
            "columns": timing(columns_one_by_one), "jacfwd": timing(lambda: jacfwd(f)(x)),
            "batched_vjp": timing(batched_vjp)}


def batched_repr():
    """How f sees its argument inside vmap: PyTorch's BatchedTensor, printed."""
    seen = []
    vmap(lambda x: seen.append(repr(x)) or x)(torch.arange(6.0).reshape(2, 3))
    return seen[0]


def fallback_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vmap(torch.argwhere)(torch.ones(2, 3))
    return {"op": "aten::argwhere", "text": next(str(w.message) for w in caught if "performance drop" in str(w.message))}


def cpu_name():
    """The processor's model name (Linux), else what platform knows."""
    cpuinfo = Path("/proc/cpuinfo")
    names = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
             if line.startswith("model name")] if cpuinfo.exists() else []
    return names[0] if names else platform.processor() or platform.machine()


def main():
    torch.set_num_threads(1)
    record = {"torch": torch.__version__, "machine": cpu_name(),
              "threads": torch.get_num_threads(), "per_sample": per_sample_gradients(), "jacobian": jacobians(),
              "fallback": fallback_warning(), "batched_repr": batched_repr()}
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
