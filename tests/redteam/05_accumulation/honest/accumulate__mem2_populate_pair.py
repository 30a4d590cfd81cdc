# style: a right answer that prefaults two 400 MB scratch buffers at once, one per thread (mmap module with
#   MAP_POPULATE, so the page faults happen up front, in parallel), three times; the kernel's address space peaks
#   near 1.8 GB, under the 2 GB cap: nothing is refused. A watcher that counts a call still populating (already
#   in VmSize) as a call in progress counts its 400 MB twice and could write a false row
# expect: full points for accumulate; no integrity row
import mmap
import threading
import time

import numpy as np


def _prefault(n, out):
    out.append(mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_POPULATE))


for _round in range(3):
    _bufs = []
    _a = threading.Thread(target=_prefault, args=(400 * 2**20, _bufs))
    _b = threading.Thread(target=_prefault, args=(400 * 2**20, _bufs))
    _t0 = time.perf_counter()
    _a.start()
    time.sleep(0.02)
    _b.start()
    _a.join()
    _b.join()
    print(f"round {_round}: {len(_bufs)} buffers of 400 MB prefaulted in {time.perf_counter() - _t0:.2f} s")
    for _m in _bufs:
        _m.close()
    del _bufs


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
