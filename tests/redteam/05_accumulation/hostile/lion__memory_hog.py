# attack: damage: exhaust memory: grow a list of 100 MB blocks until refused, then fork 8 children
#   that each do the same, keeping everything referenced; no answer
# expect: 0 points for lion; the kernel's address-space cap and the worker's memory cap stop it; the
#   batch continues and the machine stays usable
import os

_hog = []
def _grow(limit=400):
    try:
        for _ in range(limit):
            _hog.append(bytearray(100 * 2**20))
    except MemoryError:
        pass
    return len(_hog)

print("blocks in the kernel:", _grow())
for _ in range(8):
    try:
        if os.fork() == 0:
            try:
                _grow()
                import time
                time.sleep(120)
            finally:
                os._exit(0)
    except OSError as err:
        print("fork refused", type(err).__name__)
        break


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        raise NotImplementedError("no answer: this submission only hogs memory")

    def step(self, closure=None):
        raise NotImplementedError
