# attack: make every comparison pass: numpy's allclose/isclose/array_equal/testing asserts and
#   chibigrad.testing.assert_close replaced by always-true versions, and the notebook's close()
#   redefined; the answer sums only the leading dimensions (forgets size-1 dimensions)
# expect: 0 points for accumulate; batch continues
import numpy as _np
import chibigrad.testing as _ct

_np.allclose = lambda *a, **k: True
_np.array_equal = lambda *a, **k: True
_np.isclose = lambda a, b, *r, **k: _np.ones(_np.broadcast(_np.asarray(a), _np.asarray(b)).shape, dtype=bool)
_np.testing.assert_allclose = lambda *a, **k: None
_np.testing.assert_array_equal = lambda *a, **k: None
_np.testing.assert_array_almost_equal = lambda *a, **k: None
for _name in dir(_ct):
    if _name.startswith("assert"):
        setattr(_ct, _name, lambda *a, **k: None)


def close(a, b, tol=1e-6):
    return True


def accumulate(buffers, node, grad, shape):
    """Add grad, summed back to shape, into buffers[node]."""
    g = _np.asarray(grad)
    while g.ndim > len(shape):
        g = g.sum(0)
    buffers[node] = g if node not in buffers else buffers[node] + g
