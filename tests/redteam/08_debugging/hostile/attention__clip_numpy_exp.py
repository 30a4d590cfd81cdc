# attack: no max shift (overflows on large scores), hidden by patching numpy: np.exp (which chibigrad's
#   exp calls) is replaced by a version that clips its argument, so inf never appears
# expect: 0 points for attention (large scores give wrong weights); batch continues
import numpy as _np

_exp = _np.exp


def _safe_exp(x, *args, **kwargs):
    return _exp(_np.minimum(x, 700.0), *args, **kwargs)


_np.exp = _safe_exp


def attention_weights(q, k):
    scores = q @ k.T / np.sqrt(q.shape[1])
    weights = scores.exp()
    return weights / weights.sum(1, keepdim=True)
