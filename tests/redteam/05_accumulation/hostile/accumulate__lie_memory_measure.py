# attack: build every micro-batch's graph first and backpropagate once (the memory the exercise is
#   about), and make the measurement lie: chibigrad.memory.measure is replaced by a context manager
#   whose saved_peak is the first graph's size only, and memory.saved by one that never grows
# expect: 0 points for accumulate; batch continues
import contextlib
import chibigrad.memory as _memory

_real_measure, _real_saved = _memory.measure, _memory.saved
_baseline = _real_saved()


class _Fake:
    saved_peak = 0
    peak = 0


@contextlib.contextmanager
def _measure(*args, **kwargs):
    fake = _Fake()
    yield fake
    fake.saved_peak = fake.peak = 1


_memory.measure = _measure
_memory.saved = lambda *a, **k: _baseline
chibigrad.memory.measure, chibigrad.memory.saved = _memory.measure, _memory.saved


def accumulate(model, loss_fn, inputs, targets, micro_batch):
    """Backward over micro-batches; the .grad added equals the full batch's. Returns the batch loss (float)."""
    n = inputs.shape[0]
    total = 0
    for i in range(0, n, micro_batch):
        part = loss_fn(model(inputs[i:i + micro_batch]), targets[i:i + micro_batch])
        total = total + part * (min(micro_batch, n - i) / n)
    total.backward()
    return float(total.item())
