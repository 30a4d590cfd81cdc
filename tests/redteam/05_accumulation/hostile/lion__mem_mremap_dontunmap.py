# attack: evade the allocation watcher's arithmetic: map 700 MB (allowed: the watcher is told, nothing refused),
#   then mremap it to the same size with MREMAP_MAYMOVE | MREMAP_DONTUNMAP: the size does not grow (a
#   listener that reckons new_size - old_size sees 0), yet the address space would grow by 700 MB more, past
#   the cap, which refuses it (ENOMEM); peak stays about 700 MB above the start; no answer
# expect: 0 points for lion; integrity.csv row (stopped at a limit)
import ctypes, ctypes.util

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.syscall.restype = ctypes.c_long
SYS_mremap, MREMAP_MAYMOVE, MREMAP_DONTUNMAP = 25, 1, 4
_n = 700 * 2**20
_a = _libc.mmap(None, _n, 3, 0x22, -1, 0)  # PROT_READ|WRITE, MAP_PRIVATE|ANONYMOUS
if _a in (None, 2**64 - 1):
    print("700 MB refused, errno", ctypes.get_errno())
else:
    _b = _libc.syscall(ctypes.c_long(SYS_mremap), ctypes.c_void_p(_a), ctypes.c_size_t(_n), ctypes.c_size_t(_n),
                       ctypes.c_long(MREMAP_MAYMOVE | MREMAP_DONTUNMAP), ctypes.c_void_p(0))
    if _b == -1:
        print("RT-DAMAGE mremap DONTUNMAP refused, errno", ctypes.get_errno())
    else:
        print("mremap DONTUNMAP granted?!")
        _libc.munmap(ctypes.c_void_p(_b), _n)
    _libc.munmap(ctypes.c_void_p(_a), _n)


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        raise NotImplementedError("no answer: this submission only probes the memory cap")

    def step(self, closure=None):
        raise NotImplementedError
