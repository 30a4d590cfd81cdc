"""vmap against loops, in one process.

1. Per-sample gradients of an MLP 784-128-10 (ReLU, cross-entropy), batch 64, float32:
   ``vmap(grad(loss), in_dims=(None, 0, 0))`` against a Python loop of 64 ``grad`` calls.
   Goal: vmap at least 10x faster.
2. The Jacobian of f: R^100 -> R^100 (two tanh layers) by ``jacrev`` (one vjp vmapped over the 100
   rows of the identity) against one batched VJP of the same size (f on a batch of 100 inputs,
   then one backward pass with 100 cotangents), and against the old way, 100 vjp calls.
   Goal: jacrev within 3x the batched VJP.

    python benchmarks/bench_vmap.py [--quick]
"""
import sys

from _common import QUICK, interleaved, report  # sets one BLAS thread before numpy loads

import chibigrad as torch
import chibigrad.nn.functional as F
from chibigrad.func import functional_call, grad, jacrev, vjp, vmap

BATCH, SIZES = (4, (20, 8, 10)) if QUICK else (64, (784, 128, 10))
N = 6 if QUICK else 100
REPEATS = 2 if QUICK else 15


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

    def vmapped():
        return vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)

    same = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(loop().values(), vmapped().values()))
    print(f"per-sample gradients, MLP {'-'.join(map(str, SIZES))}, batch {BATCH}, float32: vmap equals the loop: "
          f"{'yes' if same else 'NO'}")
    median = interleaved({"loop": loop, "vmap": vmapped}, REPEATS)
    print(f"median: loop of {BATCH} grad calls {median['loop'] * 1e3:.1f} ms, vmap(grad) {median['vmap'] * 1e3:.1f} ms")
    report("loop / vmap (goal >= 10x)", median["loop"] / median["vmap"])
    return same


def jacobian():
    torch.manual_seed(0)
    w1, w2 = torch.randn(N, N) / N ** 0.5, torch.randn(N, N) / N ** 0.5

    def f(x):
        return torch.tanh(w2 @ torch.tanh(w1 @ x))

    x = torch.randn(N)
    xs, cotangents = torch.randn(N, N), torch.randn(N, N)

    def batched_vjp():  # f on N inputs, one backward with N cotangents
        _, vjp_fn = vjp(lambda b: torch.tanh(torch.tanh(b @ w1.T) @ w2.T), xs)
        return vjp_fn(cotangents)

    def rows_one_by_one():
        out, vjp_fn = vjp(f, x)
        return torch.stack([vjp_fn(e)[0] for e in torch.eye(N)])

    same = torch.allclose(jacrev(f)(x), rows_one_by_one(), atol=1e-6)
    print(f"jacrev of f: R^{N} -> R^{N}: equals {N} vjp calls: {'yes' if same else 'NO'}")
    median = interleaved({"batched": batched_vjp, "jacrev": lambda: jacrev(f)(x), "rows": rows_one_by_one}, REPEATS)
    print(f"median: one batched VJP {median['batched'] * 1e3:.2f} ms, jacrev {median['jacrev'] * 1e3:.2f} ms, "
          f"{N} vjp calls {median['rows'] * 1e3:.2f} ms")
    report("jacrev / one batched VJP", median["jacrev"] / median["batched"], target=3.0)
    report(f"{N} vjp calls / jacrev", median["rows"] / median["jacrev"])
    return same


def main():
    same = per_sample_gradients()
    same = jacobian() and same
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
