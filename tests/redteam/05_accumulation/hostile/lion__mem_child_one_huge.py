# attack: evade the allocation watcher from another process: a forked child (its own address space) asks once
#   for 1.5 GB (np.empty), the cap refuses it, the child catches the MemoryError, reports through a pipe and
#   exits; the kernel's own peak never moves; no answer
# expect: 0 points for lion; integrity.csv row (stopped at a limit)
import os
import numpy as np

_r, _w = os.pipe()
_pid = os.fork()
if _pid == 0:
    _msg = "granted?!"
    try:
        np.empty(1536 * 2**20, dtype=np.uint8)
    except MemoryError:
        _msg = "refused"
    finally:
        os.write(_w, _msg.encode())
        os._exit(0)
os.close(_w)
os.waitpid(_pid, 0)
print("RT-DAMAGE child's 1.5 GB:", os.read(_r, 100).decode())
os.close(_r)


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        raise NotImplementedError("no answer: this submission only probes the memory cap")

    def step(self, closure=None):
        raise NotImplementedError
