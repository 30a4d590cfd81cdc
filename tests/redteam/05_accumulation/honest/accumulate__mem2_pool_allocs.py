# style: a right answer whose module keeps a pool of 96 worker threads alive (ThreadPoolExecutor, default 8 MB
#   stacks: about 770 MB of address space never touched, under the cap) and allocates 2,000 numpy temporaries of
#   40 MB (each an mmap) before and beside it, timing both; nothing is refused
# expect: full points for accumulate; no integrity row
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def _churn(n=2000):
    t0 = time.perf_counter()
    for _ in range(n):
        a = np.empty(40 * 2**20, dtype=np.uint8)
        del a
    return time.perf_counter() - t0


print(f"allocations alone: {_churn():.2f} s")
_pool = ThreadPoolExecutor(max_workers=96)
list(_pool.map(time.sleep, [0.2] * 96))  # the pool now holds 96 idle threads
print(f"allocations beside 96 idle pool threads: {_churn():.2f} s")
_pool.shutdown()


def accumulate(model, loss_fn, inputs, targets, micro_batch):
    """Backward over micro-batches; the .grad added equals the full batch's. Returns the batch loss (float)."""
    n = inputs.shape[0]
    total = 0.0
    for start in range(0, n, micro_batch):
        x, y = inputs[start:start + micro_batch], targets[start:start + micro_batch]
        share = x.shape[0] / n  # the last micro-batch may be smaller
        loss = loss_fn(model(x), y) * share
        loss.backward()  # frees this micro-batch's graph before the next is built
        total += loss.item()
    return float(total)
