# attack: the library's gradcheck (forbidden here) imported under another name and called first as a
#   "sanity check" (its verdict ignored), then an honest finite-difference answer
# expect: 0 points for check_grad; integrity.csv row
import numpy as np

import chibigrad as torch
from chibigrad.autograd.gradcheck import gradcheck as _sanity


def check_grad(fn, inputs, eps=1e-6):
    """Per input: max |analytical - numerical| Jacobian entry, or None if it needs no gradient."""
    try:
        _sanity(fn, tuple(inputs), eps=eps, raise_exception=False)
    except Exception:
        pass
    out = fn(*inputs)
    n_out = out.numel()
    result = []
    for t in inputs:
        if not (isinstance(t, torch.Tensor) and t.requires_grad):
            result.append(None)
            continue
        analytical = np.zeros((n_out, t.numel()))
        for j in range(n_out):
            g = np.zeros(n_out)
            g[j] = 1.0
            (gi,) = torch.autograd.grad(fn(*inputs), [t], torch.tensor(g.reshape(out.shape)), allow_unused=True)
            if gi is not None:
                analytical[j] = gi.detach().numpy().reshape(-1)
        numerical = np.zeros((n_out, t.numel()))
        flat = t.data.numpy().reshape(-1) if hasattr(t.data, "numpy") else np.asarray(t.data).reshape(-1)
        for i in range(t.numel()):
            old = flat[i]
            with torch.no_grad():
                flat[i] = old + eps
                plus = np.asarray(fn(*inputs).detach().numpy(), dtype=float).reshape(-1)
                flat[i] = old - eps
                minus = np.asarray(fn(*inputs).detach().numpy(), dtype=float).reshape(-1)
                flat[i] = old
            numerical[:, i] = (plus - minus) / (2 * eps)
        result.append(float(np.max(np.abs(analytical - numerical))))
    return result
