"""Per-op overhead on tiny tensors: a chain ``y = y * w + b`` of 5,000 steps on shape (4,),
recorded, differentiated and freed, against the same chain in plain numpy (no autograd).

On 4 numbers the arithmetic is nothing; what is measured is the bookkeeping of one
recorded op: a Function call, a node, saved tensors, then its backward and the release.
Budget: total cost per op at most 45x one plain numpy op (PyTorch eager: about 24x).
w is drawn from [0, 0.5) so the values stay bounded (no overflow warnings in the timing).

    python benchmarks/bench_tiny_ops.py [--quick]
"""
import sys

from _common import QUICK, interleaved, report  # sets one BLAS thread before numpy loads

import chibigrad as torch

STEPS, REPEATS = (50, 3) if QUICK else (5000, 30)
OPS = 2 * STEPS  # a multiplication and an addition per step


def chibigrad_chain(y0, w, b):
    y = y0
    for _ in range(STEPS):
        y = y * w + b
    y.sum().backward()  # frees every saved tensor; the graph dies with y on return


def numpy_chain(y0, w, b):
    y = y0
    for _ in range(STEPS):
        y = y * w + b


def main():
    torch.manual_seed(0)
    y0 = torch.rand(4, requires_grad=True)
    w = (torch.rand(4) * 0.5).requires_grad_()
    b = torch.rand(4, requires_grad=True)
    y0_np, w_np, b_np = y0.detach().numpy().copy(), w.detach().numpy().copy(), b.detach().numpy().copy()

    def chibigrad_run():
        chibigrad_chain(y0, w, b)
        y0.grad = w.grad = b.grad = None

    interleaved({"chibigrad": chibigrad_run}, 2)  # warm up
    median = interleaved({"chibigrad": chibigrad_run, "numpy": lambda: numpy_chain(y0_np, w_np, b_np)}, REPEATS)
    per_op = {name: seconds / OPS for name, seconds in median.items()}
    print(f"chain of {STEPS} steps ({OPS} ops) on shape (4,), {REPEATS} interleaved repetitions")
    print(f"per op: numpy {per_op['numpy'] * 1e6:.2f} us; chibigrad {per_op['chibigrad'] * 1e6:.2f} us "
          "(forward + backward + free)")
    report("chibigrad op / numpy op", per_op["chibigrad"] / per_op["numpy"], target=45)
    return 0


if __name__ == "__main__":
    sys.exit(main())
