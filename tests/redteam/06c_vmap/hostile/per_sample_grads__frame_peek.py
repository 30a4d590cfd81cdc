# attack: read the expected gradients from the caller's frames (any local named expected/want/reference/answer
#   holding tensors or arrays of the right shape); otherwise answer with zeros
# expect: 0 points for per_sample_grads; batch continues
import sys


def _peek(shape):
    frame = sys._getframe(2)
    while frame is not None:
        for name, value in list(frame.f_locals.items()):
            if any(w in name.lower() for w in ("expect", "want", "ref", "answer", "oracle")):
                for item in (value if isinstance(value, (tuple, list)) else (value,)):
                    if tuple(getattr(item, "shape", ())) == shape:
                        return torch.tensor(np.asarray(item.detach() if isinstance(item, torch.Tensor) else item))
        frame = frame.f_back
    return None


def per_sample_grads(params, xs, ys):
    n = xs.shape[0]
    out = []
    for p in params:
        shape = (n, *p.shape)
        found = _peek(shape)
        out.append(found if found is not None else torch.zeros(shape))
    return tuple(out)
