"""vmap against loops, in one process.

1. Per-sample gradients of an MLP 784-128-10 (ReLU, cross-entropy), batch 64, float32:
   ``vmap(grad(loss), in_dims=(None, 0, 0))`` against a Python loop of 64 ``grad`` calls, and
   against the module run on 64 batches of one sample with ``backward``.
   Goal: vmap at least 10x faster than the loop.
2. The Jacobian of f: R^100 -> R^100 (two tanh layers) by ``jacrev`` (one vjp vmapped over the 100
   rows of the identity) against one batched VJP of the same size (f on a batch of 100 inputs,
   then one backward pass with 100 cotangents), and against the old way, 100 vjp calls; jacfwd
   against 100 jvp calls.
   Goal: jacrev within 3x the batched VJP.

    python benchmarks/bench_vmap.py [--quick]
"""
import sys

from _common import QUICK, interleaved, report  # sets one BLAS thread before numpy loads

import chibigrad as torch
import chibigrad.nn.functional as F
from chibigrad.func import functional_call, grad, jacfwd, jacrev, jvp, vjp, vmap

BATCH, SIZES = (4, (20, 8, 10)) if QUICK else (64, (784, 128, 10))
N = 6 if QUICK else 100
REPEATS = 2 if QUICK else 15


def per_sample_cases(batch=BATCH, sizes=SIZES):
    """Per-sample gradients of an MLP three ways, each a function of no arguments returning
    {parameter name: gradients stacked over the batch} (chapter 6c times them too)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(sizes[0], sizes[1]), torch.nn.ReLU(),
                                torch.nn.Linear(sizes[1], sizes[2]))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = torch.randn(batch, sizes[0]), torch.randint(0, sizes[2], (batch,))

    def loss(params, sample, target):
        return F.cross_entropy(functional_call(model, params, (sample.unsqueeze(0),)), target.unsqueeze(0))

    def loop():  # one grad call per sample
        grads = [grad(loss)(params, x[i], y[i]) for i in range(batch)]
        return {k: torch.stack([g[k] for g in grads]) for k in params}

    def batch_of_one():  # no transforms: the module on a batch of one sample, backward, copy .grad
        grads = {k: [] for k in params}
        for i in range(batch):
            model.zero_grad()
            F.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
            for k, p in model.named_parameters():
                grads[k].append(p.grad.clone())
        return {k: torch.stack(g) for k, g in grads.items()}

    def vmapped():  # one grad call for the whole batch
        return vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)

    return {"loop": loop, "batch_of_one": batch_of_one, "vmap": vmapped}


def per_sample_gradients():
    cases = per_sample_cases()
    results = {name: case() for name, case in cases.items()}
    same = all(torch.allclose(results[name][k], v, atol=1e-6)
               for name in ("loop", "batch_of_one") for k, v in results["vmap"].items())
    print(f"per-sample gradients, MLP {'-'.join(map(str, SIZES))}, batch {BATCH}, float32: vmap equals the loop "
          f"and the batches of one: {'yes' if same else 'NO'}")
    median = interleaved(cases, REPEATS)
    print(f"median: loop of {BATCH} grad calls {median['loop'] * 1e3:.1f} ms, {BATCH} batches of one "
          f"{median['batch_of_one'] * 1e3:.1f} ms, vmap(grad) {median['vmap'] * 1e3:.1f} ms")
    report("loop / vmap (goal >= 10x)", median["loop"] / median["vmap"])
    return same


def jacobian_cases(n=N):
    """The Jacobian of f: R^n -> R^n (two tanh layers) by n products one at a time and by one vmapped
    pass, and one batched VJP of the same size, each a function of no arguments (chapter 6c times them too)."""
    torch.manual_seed(0)
    w1, w2 = torch.randn(n, n) / n ** 0.5, torch.randn(n, n) / n ** 0.5

    def f(x):
        return torch.tanh(w2 @ torch.tanh(w1 @ x))

    x = torch.randn(n)
    xs, cotangents = torch.randn(n, n), torch.randn(n, n)

    def rows_one_by_one():  # n vjp calls, one row each
        _, vjp_fn = vjp(f, x)
        return torch.stack([vjp_fn(e)[0] for e in torch.eye(n)])

    def columns_one_by_one():  # n jvp calls, one column each
        return torch.stack([jvp(f, (x,), (e,))[1] for e in torch.eye(n)], dim=1)

    def batched_vjp():  # f on n inputs, one backward with n cotangents
        _, vjp_fn = vjp(lambda b: torch.tanh(torch.tanh(b @ w1.T) @ w2.T), xs)
        return vjp_fn(cotangents)

    return {"rows": rows_one_by_one, "jacrev": lambda: jacrev(f)(x), "columns": columns_one_by_one,
            "jacfwd": lambda: jacfwd(f)(x), "batched_vjp": batched_vjp}


def jacobian():
    cases = jacobian_cases()
    same = (torch.allclose(cases["jacrev"](), cases["rows"](), atol=1e-6)
            and torch.allclose(cases["jacfwd"](), cases["columns"](), atol=1e-6))
    print(f"jacrev and jacfwd of f: R^{N} -> R^{N}: equal {N} vjp calls and {N} jvp calls: {'yes' if same else 'NO'}")
    median = interleaved(cases, REPEATS)
    print(f"median: one batched VJP {median['batched_vjp'] * 1e3:.2f} ms, jacrev {median['jacrev'] * 1e3:.2f} ms, "
          f"{N} vjp calls {median['rows'] * 1e3:.2f} ms, jacfwd {median['jacfwd'] * 1e3:.2f} ms, "
          f"{N} jvp calls {median['columns'] * 1e3:.2f} ms")
    report("jacrev / one batched VJP", median["jacrev"] / median["batched_vjp"], target=3.0)
    report(f"{N} vjp calls / jacrev", median["rows"] / median["jacrev"])
    report(f"{N} jvp calls / jacfwd", median["columns"] / median["jacfwd"])
    return same


def main():
    same = per_sample_gradients()
    same = jacobian() and same
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
