"""Backward through a chain of 1,000,000 nodes: it must work (the engine never recurses)
and cost the same per node as a 10,000-node chain (time linear in depth).

Each node is ``y = y.sin()`` on a one-element tensor (SinBackward0, which saves its
input), so backward also frees a million saved tensors.
Budget: backward time per node of the long chain within 1.5x of the short chain's.

    python benchmarks/bench_deep_chain.py [--quick]
"""
import statistics
import sys
import time

from _common import QUICK, report  # sets one BLAS thread before numpy loads

import chibigrad as torch

SHORT, LONG, REPEATS = (100, 10_000, 3) if QUICK else (10_000, 1_000_000, 3)  # the long chain runs once


def chain(depth):
    """CPU seconds per node to build a chain of ``depth`` nodes, to run its backward, and to free it."""
    x = torch.tensor([0.5], requires_grad=True)
    start = time.process_time()
    y = x
    for _ in range(depth):
        y = y.sin()
    built = time.process_time()
    y.backward()
    done = time.process_time()
    assert x.grad is not None and y.grad_fn._saved[0].is_released
    del y  # a million nodes linked one to the next: freeing them must not recurse either
    freed = time.process_time()
    return (built - start) / depth, (done - built) / depth, (freed - done) / depth


def median_chain(depth, repeats):
    runs = [chain(depth) for _ in range(repeats)]
    return [statistics.median(column) for column in zip(*runs)]


def main():
    short, long = median_chain(SHORT, REPEATS), median_chain(LONG, 1)
    print(f"per node (CPU us; short chain: median of {REPEATS} runs): forward, backward, free")
    print(f"  {SHORT:>9,} nodes: " + ", ".join(f"{t * 1e6:.2f}" for t in short))
    print(f"  {LONG:>9,} nodes: " + ", ".join(f"{t * 1e6:.2f}" for t in long))
    report(f"backward per node, {LONG:,} / {SHORT:,} nodes", long[1] / short[1], target=1.5)
    report(f"forward per node, {LONG:,} / {SHORT:,} nodes", long[0] / short[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
