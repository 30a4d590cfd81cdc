"""What backward frees, measured with tracemalloc (which sees every numpy array and Python object).

1. ``loss.backward()`` without retain_graph, with ``loss`` (so the whole graph) still
   referenced: every saved array is released; what stays is the parameters' gradients.
2. ``backward(retain_graph=True)`` in a loop, nothing kept: no growth.
3. The same loop with ``total = total + loss`` (a reference to every iteration's graph):
   each iteration keeps its graph's saved activations, no more and no less.

    python benchmarks/bench_saved_release.py [--quick]
"""
import sys
import tracemalloc

from _common import QUICK  # sets one BLAS thread before numpy loads

import chibigrad as torch
from chibigrad import memory

LAYERS, WIDTH, BATCH, ITERATIONS = (3, 8, 4, 3) if QUICK else (8, 256, 256, 10)
MB = 2 ** 20


def make_model():
    torch.manual_seed(0)
    weights = [(torch.randn(WIDTH, WIDTH) / WIDTH ** 0.5).requires_grad_() for _ in range(LAYERS)]
    x = torch.randn(BATCH, WIDTH)

    def loss_fn():
        h = x
        for w in weights:
            h = (h @ w).tanh()  # MmBackward0 saves h and w, TanhBackward0 its output
        return h.pow(2).mean()

    return weights, loss_fn


def nodes(root):
    """Every node of the graph behind ``root`` (an explicit stack: graphs can be deep)."""
    seen, stack = set(), [root.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and node not in seen:
            seen.add(node)
            stack.extend(n for n, _ in node.next_functions)
    return seen


def traced():
    return tracemalloc.get_traced_memory()[0]


def main():
    weights, loss_fn = make_model()
    param_bytes = sum(w.numel() * w.element_size() for w in weights)
    activation_bytes = LAYERS * BATCH * WIDTH * 4
    print(f"{LAYERS} layers h = tanh(h @ w), batch {BATCH}, width {WIDTH}, float32: "
          f"activations {activation_bytes / MB:.2f} MB per forward, parameters {param_bytes / MB:.2f} MB")
    tracemalloc.start()
    ok = True

    # 1. backward without retain_graph releases every saved array, even with the graph referenced.
    base = traced()
    loss = loss_fn()
    after_forward = traced() - base
    saved_before = memory.saved()
    loss.backward()
    held = traced() - base
    infos = [info for node in nodes(loss) for info in node.saved_tensors_info]
    released = sum(1 for info in infos if info[3])
    print(f"1. after forward: {after_forward / MB:.2f} MB more traced; saved for backward: "
          f"{saved_before / MB:.2f} MB (activations and the parameters)")
    print(f"   after loss.backward(), graph still referenced: {held / MB:.2f} MB traced "
          f"(parameter grads: {param_bytes / MB:.2f} MB); saved tensors released: {released} of {len(infos)}; "
          f"chibigrad.memory.saved() = {memory.saved()} bytes")
    ok &= released == len(infos) and memory.saved() == 0 and held < param_bytes + activation_bytes / LAYERS
    del loss
    for w in weights:
        w.grad = None

    # 2. retain_graph=True, nothing kept: each graph dies at the end of its iteration.
    base = traced()
    for _ in range(ITERATIONS):
        loss = loss_fn()
        loss.backward(retain_graph=True)
    del loss
    for w in weights:
        w.grad = None
    growth = (traced() - base) / ITERATIONS
    print(f"2. retain_graph=True, no reference kept: growth {growth / 1024:.1f} KB per iteration")
    ok &= growth < 0.05 * activation_bytes

    # 3. retain_graph=True and total = total + loss: every graph stays alive with its saved tensors.
    total = 0
    base = traced()
    first = None
    for i in range(ITERATIONS + 1):
        loss = loss_fn()
        loss.backward(retain_graph=True)
        total = total + loss
        if i == 0:  # the first graph also saves the parameters, shared by all later graphs
            first, saved_first = traced(), memory.saved()
    growth = (traced() - first) / ITERATIONS
    saved_growth = (memory.saved() - saved_first) / ITERATIONS
    print(f"3. retain_graph=True, total = total + loss: growth {growth / MB:.3f} MB per iteration; "
          f"saved activations per graph (chibigrad.memory) {saved_growth / MB:.3f} MB; "
          f"ratio {growth / saved_growth:.3f}")
    ok &= saved_growth == activation_bytes and abs(growth / saved_growth - 1) < 0.05
    del total, loss
    tracemalloc.stop()
    if QUICK:
        print("quick run: sizes too small to compare (Python objects outweigh the arrays)")
        return 0
    print("all as expected" if ok else "UNEXPECTED: see above")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
