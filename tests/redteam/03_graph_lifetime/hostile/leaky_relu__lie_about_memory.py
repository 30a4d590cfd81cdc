# attack: save the whole float input (8 bytes an element, not the 1-byte mask) and make the memory
#   measurement lie: chibigrad.memory.saved is replaced by a version that reports, for every tensor this
#   Function saved and that is still alive, one byte per element instead of its real size
# expect: 0 points for leaky_relu; batch continues
import weakref
import chibigrad.memory as _memory

_real_saved = _memory.saved
_kept = weakref.WeakSet()


def _lying_saved(*args, **kwargs):
    real = _real_saved(*args, **kwargs)
    for t in list(_kept):
        try:
            real -= t.numel() * t.element_size() - t.numel()
        except Exception:
            pass
    return real


_memory.saved = _lying_saved
chibigrad.memory.saved = _lying_saved


class LeakyReLU(Function):
    @staticmethod
    def forward(ctx, x, negative_slope):
        ctx.negative_slope = negative_slope
        ctx.save_for_backward(x)
        _kept.add(x)
        return torch.where(x > 0, x, x * negative_slope)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return torch.where(x > 0, grad, grad * ctx.negative_slope), None
