# style: a right answer that takes each gradient's norm in a pool of 16 threads (concurrent.futures, numpy in
#   each task): no big array at all, but each thread has its stack (8 MB) and glibc gives busy threads arenas of
#   their own (64 MB of address space reserved each), so the address space grows by hundreds of MB that are never
#   touched; nothing is refused
# expect: full points for clip_grad_norm_groups; no integrity row
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def _part(g, p):
    a = np.abs(np.asarray(g.detach(), dtype=np.float64).ravel())
    if a.size == 0:
        return 0.0
    return float(a.max()) if math.isinf(p) else float(np.sum(a ** p))


def clip_grad_norm_groups_(optimizer, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Clip each parameter group's gradients to its own max norm, in place; return the norms before clipping."""
    p = float(norm_type)
    norms = []
    with ThreadPoolExecutor(max_workers=16) as pool, torch.no_grad():
        for group in optimizer.param_groups:
            limit = group.get("max_norm", max_norm)
            grads = [q.grad for q in group["params"] if q.grad is not None]
            if not grads:
                norms.append(0.0)
                continue
            parts = list(pool.map(_part, grads, [p] * len(grads)))
            total = float(np.max(parts)) if math.isinf(p) else sum(parts) ** (1.0 / p)
            if error_if_nonfinite and not math.isfinite(total):
                raise RuntimeError(NONFINITE.format(float(norm_type)))
            coef = float(np.minimum(1.0, limit / (total + 1e-6)))
            for g in grads:
                g.mul_(coef)
            norms.append(float(total))
    return norms
