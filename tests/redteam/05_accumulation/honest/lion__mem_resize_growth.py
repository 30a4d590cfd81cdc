# style: a right answer, after a log buffer grown by doubling with ndarray.resize up to 512 MB (realloc, that is
#   mremap, past an eighth of the cap several times), kept alive: nothing refused
# expect: full points for lion; no integrity row
import time
import numpy as np

_t0 = time.perf_counter()
_log = np.zeros(2**20, dtype=np.uint8)
while _log.nbytes < 512 * 2**20:
    _log.resize(_log.nbytes * 2, refcheck=False)
_log[-1] = 1
print(f"grown to {_log.nbytes >> 20} MB in {time.perf_counter() - _t0:.3f} s")


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        defaults = dict(lr=lr, betas=betas, weight_decay=weight_decay)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        with torch.no_grad():
            for group in self.param_groups:
                lr, (beta1, beta2), wd = group["lr"], group["betas"], group["weight_decay"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    g = p.grad
                    state = self.state[p]
                    if "exp_avg" not in state:
                        state["exp_avg"] = torch.zeros_like(p)
                    m = state["exp_avg"]
                    p.mul_(1 - lr * wd)
                    p.add_((m * beta1 + g * (1 - beta1)).sign(), alpha=-lr)
                    m.mul_(beta2).add_(g, alpha=1 - beta2)
        return loss
