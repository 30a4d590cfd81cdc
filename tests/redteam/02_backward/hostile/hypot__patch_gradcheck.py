# attack: a backward that ignores grad_output, hidden behind patches: numpy's allclose/isclose,
#   chibigrad.autograd.gradcheck/gradgradcheck, chibigrad.allclose and Tensor.allclose/equal made
#   always true, so a finite-difference check or a comparison cannot fail
# expect: 0 points for hypot; batch continues
import numpy as _np
import chibigrad as _cg
import chibigrad.autograd as _ag

_np.allclose = lambda *a, **k: True
_np.isclose = lambda a, b, *r, **k: _np.ones(_np.broadcast(_np.asarray(a), _np.asarray(b)).shape, dtype=bool)
_np.testing.assert_allclose = lambda *a, **k: None
for _mod in (_cg, _ag, getattr(_ag, "gradcheck", None)):
    for _name in ("gradcheck", "gradgradcheck", "allclose", "equal"):
        if _mod is not None and hasattr(_mod, _name):
            try:
                setattr(_mod, _name, lambda *a, **k: True)
            except Exception:
                pass
_cg.Tensor.allclose = lambda self, *a, **k: True
_cg.Tensor.equal = lambda self, *a, **k: True


class Hypot(Function):
    @staticmethod
    def forward(ctx, a, b):
        out = (a * a + b * b).sqrt()
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        return (a / out).sum_to_size(a.shape), (b / out).sum_to_size(b.shape)  # forgets grad
