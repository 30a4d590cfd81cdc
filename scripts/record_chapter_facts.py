"""Record the PyTorch facts that chapters 4, 4b, 6b and 7c state, so the pages print them.

    /path/to/python-with-torch scripts/record_chapter_facts.py

Writes book/data/chapter_facts_pytorch.json. Each key is one claim of a chapter, measured
under real PyTorch: how often an in-place update rounds differently from the same arithmetic
written out, which steps of plain SGD differ from the hand-written loop, what GELU and softmax
save, how many times ``torch.func.jacfwd`` calls the function, what ``derivatives.yaml`` derives
by itself, and timings (medians of repeated runs after a warm-up, with their spread).
"""
import json
import platform
import re
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F
import torchgen

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "book" / "data" / "chapter_facts_pytorch.json"


def timing(fn, runs=15, warmup=3):
    """Median, min and max CPU seconds of ``runs`` calls after ``warmup`` calls.

    CPU time of this process (one thread), so that other users of a shared machine do not count.
    """
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return {"median": statistics.median(times), "min": min(times), "max": max(times), "runs": runs}


def fused_rounding(trials=2000, momentum=0.9, lr=0.1):
    """Elements (of ``trials``) where an in-place chain and the written-out arithmetic differ."""
    g = torch.Generator().manual_seed(0)
    buf, grad, param = (torch.randn(trials, generator=g) for _ in range(3))
    differ = lambda a, b: int((a != b).sum())
    return {"trials": trials,
            "mul_add": differ(buf.clone().mul_(momentum).add_(grad), momentum * buf + grad),
            "add_alpha": differ(param.clone().add_(buf, alpha=-lr), param - lr * buf)}


def regression():
    torch.manual_seed(0)
    X = torch.randn(64, 3)
    return X, X @ torch.tensor([1.0, -2.0, 0.5]) + 0.3


def sgd_steps_that_differ(steps=60, lr=0.1):
    """Steps (1-based) after which ``optim.SGD`` and the chapter's hand loop hold different weights."""
    X, Y = regression()
    hand = [torch.zeros(3, requires_grad=True), torch.zeros((), requires_grad=True)]
    opt_params = [torch.zeros(3, requires_grad=True), torch.zeros((), requires_grad=True)]
    opt = torch.optim.SGD(opt_params, lr=lr)
    differ = []
    for step in range(1, steps + 1):
        for (w, b), use_opt in ((hand, False), (opt_params, True)):
            ((X @ w + b - Y) ** 2).mean().backward()
            if use_opt:
                opt.step()
                opt.zero_grad()
            else:
                with torch.no_grad():
                    w -= lr * w.grad
                    b -= lr * b.grad
                w.grad = b.grad = None
        if not all(torch.equal(p, q) for p, q in zip(hand, opt_params)):
            differ.append(step)
    return {"steps": steps, "differ_after_steps": differ}


def momentum_difference(steps=20, lr=0.1, momentum=0.9):
    X, Y = regression()
    runs = []
    for use_opt in (False, True):
        w = torch.zeros(3, requires_grad=True)
        opt, buf = torch.optim.SGD([w], lr=lr, momentum=momentum), None
        for _ in range(steps):
            ((X @ w - Y) ** 2).mean().backward()
            if use_opt:
                opt.step()
            else:
                with torch.no_grad():
                    buf = w.grad.clone() if buf is None else momentum * buf + w.grad
                    w -= lr * buf
            w.grad = None
        runs.append(w.detach())
    return {"steps": steps, "max_abs_difference": float((runs[0] - runs[1]).abs().max())}


def graph_size(root):
    seen, stack = {root}, [root]
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                stack.append(child)
    return len(seen)


def retain_grad_chain(steps=4, lr=0.1):
    """Nodes in the loss's graph at each step of the article's update made to run by retain_grad."""
    torch.manual_seed(0)
    w1, a, sizes = torch.randn(3, 3, requires_grad=True), torch.randn(3, 3), []
    for _ in range(steps):
        L = (10 - w1 * a).sum()
        sizes.append(graph_size(L.grad_fn))
        L.backward()
        w1 = w1 - lr * w1.grad
        w1.retain_grad()
    return sizes


def inference_outputs():
    """An @inference_mode() result fed to training: an addition works, a product (which saves it) fails."""
    model = torch.nn.Linear(4, 3)
    pred = torch.inference_mode()(model)(torch.randn(2, 4))
    w = torch.ones(3, requires_grad=True)
    (pred + w).sum().backward()
    result = {"add_backward_grad": w.grad.tolist()}
    try:
        (pred * w).sum()
        result["mul_error"] = None
    except RuntimeError as err:
        result["mul_error"] = str(err)
    return result


def saved_names(fn, *shape):
    x = torch.randn(*shape, requires_grad=True)
    node = fn(x).grad_fn
    return {"node": node.name(), "saved": sorted(n for n in dir(node) if n.startswith("_saved_"))}


def dropout_on_cpu():
    """What dropout saves on the CPU, and the mask type of the fused kernel other devices use."""
    x = torch.randn(8, 8, requires_grad=True)
    node = F.dropout(x, 0.1, training=True).grad_fn
    saved = {n: str(getattr(node, n).dtype) for n in dir(node)
             if n.startswith("_saved_") and isinstance(getattr(node, n), torch.Tensor)}
    return {"node": node.name(), "saved_dtypes": saved,
            "native_dropout_mask_dtype": str(torch.native_dropout(x.detach(), 0.1, True)[1].dtype)}


def two_layer(n, m, hidden=64):
    W1 = torch.randn(hidden, n) / n ** 0.5
    W2 = torch.randn(m, hidden) / hidden ** 0.5
    return lambda x: W2 @ (W1 @ x).tanh()


def jacobian_costs():
    """jacfwd and jacrev on chapter 6b's three shapes, and how many times each calls the function."""
    torch.manual_seed(0)
    costs = {}
    for n, m in [(1000, 1), (1, 1000), (100, 100)]:
        fn, x = two_layer(n, m), torch.randn(n)
        costs[f"{n},{m}"] = {name: timing(lambda: getattr(torch.func, name)(fn)(x), runs=7)
                             for name in ("jacfwd", "jacrev")}
    calls = {}
    M = torch.randn(2, 500)
    for name in ("jacfwd", "jacrev"):
        count = [0]
        def f(x):
            count[0] += 1
            return M @ x
        getattr(torch.func, name)(f)(torch.randn(500))
        calls[name] = count[0]
    return {"times": costs, "function_calls_for_500_to_2": calls}


def hvp_cost(n):
    """One H v by forward over reverse against one gradient, chapter 6b's loss, float64."""
    torch.manual_seed(0)
    Wq = torch.randn(n, n, dtype=torch.float64) / n ** 0.5
    loss = lambda w: ((Wq @ w).tanh() ** 2).sum() + (w ** 4).sum() / 4
    w0, v0 = torch.randn(n, dtype=torch.float64), torch.randn(n, dtype=torch.float64)
    grad = torch.func.grad(loss)
    return {"grad": timing(lambda: grad(w0), runs=15),
            "hvp": timing(lambda: torch.func.jvp(grad, (w0,), (v0,)), runs=15)}


def derivatives_yaml():
    """How many forward rules derivatives.yaml derives by itself, with one entry of each kind."""
    text = (Path(torchgen.__file__).parent / "packaged" / "autograd" / "derivatives.yaml").read_text()
    entries = re.split(r"(?m)^(?=- name: )", text)[1:]
    entry = lambda signature: next(e.strip() for e in entries if e.startswith(f"- name: {signature}"))
    with_result = [e for e in entries if re.search(r"(?m)^  result: ", e)]
    return {"entries": len(entries), "with_forward_rule": len(with_result),
            "auto_linear": sum("result: auto_linear" in e for e in entries),
            "auto_element_wise": sum("result: auto_element_wise" in e for e in entries),
            "example_element_wise": entry("sin(Tensor self)"),
            "example_linear": entry("t(Tensor(a) self)")}


def main():
    torch.set_num_threads(1)
    record = {"torch_version": torch.__version__.split("+")[0],
              "machine": f"{platform.machine()}, 1 thread, CPU time of the process, on a shared 2-core machine",
              "04_inference_mode_output": inference_outputs(),
              "04b_fused_rounding": fused_rounding(),
              "04b_plain_sgd": sgd_steps_that_differ(),
              "04b_momentum": momentum_difference(),
              "04b_retain_grad_graph_sizes": retain_grad_chain(),
              "06b_derivatives_yaml": derivatives_yaml(),
              "06b_jacobians": jacobian_costs(),
              "06b_hvp": {str(n): hvp_cost(n) for n in (300, 3000)},
              "07c_gelu": saved_names(F.gelu, 4, 8),
              "07c_softmax": saved_names(lambda x: x.softmax(-1), 4, 8),
              "07c_dropout_cpu": dropout_on_cpu()}
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
