# style: a right answer that, on every call, allocates a 512 MB workspace (np.zeros) and copies the gradients
#   into its start to take the norm there: a big mmap the allocation watcher is told of at each call (the hidden
#   tests call it many times), never refused
# expect: full points for clip_grad_norm_groups; no integrity row
import math
import numpy as np


def clip_grad_norm_groups_(optimizer, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Clip each parameter group's gradients to its own max norm, in place; return the norms before clipping."""
    workspace = np.zeros(512 * 2**20 // 8, dtype=np.float64)
    norms = []
    with torch.no_grad():
        for group in optimizer.param_groups:
            limit = group.get("max_norm", max_norm)
            grads = [p.grad for p in group["params"] if p.grad is not None]
            if not grads:
                norms.append(0.0)
                continue
            flat = [np.asarray(g.detach(), dtype=np.float64).ravel() for g in grads]
            size = sum(f.size for f in flat)
            buf = workspace[:size] if size <= workspace.size else np.empty(size)
            np.concatenate(flat, out=buf)
            buf = np.abs(buf)
            p = float(norm_type)
            if math.isinf(p):
                total = float(buf.max()) if buf.size else 0.0
            else:
                total = float(np.sum(buf ** p) ** (1.0 / p))
            if error_if_nonfinite and not math.isfinite(total):
                raise RuntimeError(NONFINITE.format(float(norm_type)))
            coef = float(np.minimum(1.0, limit / (total + 1e-6)))
            for g in grads:
                g.mul_(coef)
            norms.append(total)
    return norms
