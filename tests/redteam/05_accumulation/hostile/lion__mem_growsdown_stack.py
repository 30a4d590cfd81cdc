# attack: evade the allocation watcher: no big mmap at all: map 64 KB with MAP_GROWSDOWN far from anything, raise
#   the soft stack limit (to the hard one, allowed), then let the kernel write 16 bytes 100 MB below it
#   (clock_gettime by raw syscall, so the fault is the kernel's and comes back as EFAULT, not SIGSEGV): the
#   stack mapping grows by 100 MB (control); then 1.5 GB below: the growth is refused by the address-space cap
#   (may_expand_vm), the call returns EFAULT; no answer
# expect: 0 points for lion; integrity.csv row (stopped at a limit)
import ctypes, ctypes.util, resource

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.syscall.restype = ctypes.c_long
MAP_PRIVATE, MAP_ANONYMOUS, MAP_GROWSDOWN = 0x02, 0x20, 0x0100
SYS_clock_gettime, CLOCK_MONOTONIC = 228, 1
_soft, _hard = resource.getrlimit(resource.RLIMIT_STACK)
print("stack limit", _soft, _hard)
try:
    resource.setrlimit(resource.RLIMIT_STACK, (_hard, _hard))
except (ValueError, OSError) as err:
    print("could not raise the stack limit:", err)
_hint = 0x100000000000  # 16 TiB: nothing mapped below it for gigabytes
_top = _libc.mmap(ctypes.c_void_p(_hint), 65536, 3, MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN, -1, 0)
print("growsdown mapping at", hex(_top or 0))


def _grow(below):
    r = _libc.syscall(ctypes.c_long(SYS_clock_gettime), ctypes.c_long(CLOCK_MONOTONIC),
                      ctypes.c_void_p(_top - below))
    return "grown" if r == 0 else f"errno {ctypes.get_errno()}"


print("RT-DAMAGE stack growth 100 MB (control):", _grow(100 * 2**20))
print("RT-DAMAGE stack growth 1.5 GB:", _grow(1536 * 2**20))
_libc.munmap(ctypes.c_void_p(_top - 100 * 2**20 - 4096), 100 * 2**20 + 4096 + 65536)
try:
    resource.setrlimit(resource.RLIMIT_STACK, (_soft, _hard))
except (ValueError, OSError):
    pass


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        raise NotImplementedError("no answer: this submission only probes the memory cap")

    def step(self, closure=None):
        raise NotImplementedError
