# style: a right answer that also keeps a 600 MB numpy scratch buffer alive for the whole notebook (np.zeros,
#   its first 60 MB written), well under the 2 GB cap: one big mmap the allocation watcher is told of, never refused
# expect: full points for accumulate; no integrity row
import numpy as np

_scratch = np.zeros(600 * 2**20, dtype=np.uint8)
_scratch[:60 * 2**20] = 1


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
