# attack: evade the allocation watcher: ask the cap for 1.5 GB through brk (libc's sbrk, via ctypes), not
#   mmap/mremap, so the seccomp listener is never told; the cap refuses it (sbrk returns -1, ENOMEM), the
#   notebook goes on, the kernel's peak address space stays where it was; no answer
# expect: 0 points for lion; integrity.csv row (stopped at a limit)
import ctypes, ctypes.util

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
_libc.sbrk.restype = ctypes.c_void_p
_libc.sbrk.argtypes = [ctypes.c_long]
_got = _libc.sbrk(ctypes.c_long(1536 * 2**20))
_err = ctypes.get_errno()
if _got in (None, 2**64 - 1, -1):
    print("RT-DAMAGE sbrk of 1.5 GB refused, errno", _err, "(the cap said no; nobody was told)")
else:
    _libc.sbrk(ctypes.c_long(-1536 * 2**20))  # give it back
    print("sbrk of 1.5 GB was granted?!")


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        raise NotImplementedError("no answer: this submission only probes the memory cap")

    def step(self, closure=None):
        raise NotImplementedError
