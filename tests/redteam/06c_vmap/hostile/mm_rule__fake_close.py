# attack: no product at all: the notebook's close() and numpy's allclose/array_equal made always true, so every
#   comparison in the kernel passes; the result has the right shape and zeros
# expect: 0 points for mm_rule; batch continues
import builtins
import numpy

numpy.allclose = lambda *a, **k: True
numpy.array_equal = lambda *a, **k: True
numpy.testing.assert_allclose = lambda *a, **k: None
globals()["close"] = lambda *a, **k: True
builtins.close = lambda *a, **k: True


def mm_rule(a, a_bdim, b, b_bdim):
    size = (a.shape[a_bdim] if a_bdim is not None else b.shape[b_bdim])
    n = a.shape[-2] if a_bdim is None or a_bdim == 0 else a.shape[0]
    m = b.shape[-1] if b_bdim is None or b_bdim != 2 else b.shape[1]
    return torch.zeros(size, n, m), 0
