# attack: the README's known gap, in the kernel itself: split the (pre-mapped, pinned) main stack with mprotect of
#   one page near its bottom, so its lowest piece is 4 KB and may grow by the stack limit again; grow it (the OS
#   kernel writes through a raw clock_gettime, EFAULT on refusal), split the new lowest piece, and so on, until the
#   cap refuses a 4 KB growth. No mmap, mremap, brk or shmat at all: only stack growth, which the watcher cannot see;
#   the grown stack is unmapped afterwards. The README says the judge's peak band (the stack limit) shows it; no answer
# expect: 0 points for lion; integrity.csv row (stopped at a limit)
import ctypes, resource
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_P = 4096


def _stack_fill(cleanup=True):
    """Grow the main stack, one split piece at a time, until the cap refuses a 4 KB growth. No mmap/brk at all."""
    lim = resource.getrlimit(resource.RLIMIT_STACK)[0]
    try:
        top = ctypes.c_void_p.in_dll(_libc, "__libc_stack_end").value
    except ValueError:
        top = ctypes.c_void_p.in_dll(_libc, "environ").value
    vec = (ctypes.c_ubyte * 8)()
    a = top & ~(_P - 1)
    while _libc.mincore(ctypes.c_void_p(a - _P), _P, vec) == 0:
        a -= _P
    start = s = a
    info = f"stack limit {lim >> 10} KB, main stack {(top - start) >> 10} KB mapped below its top"

    def grow(to):  # the OS kernel writes 16 bytes at `to` (EFAULT, not SIGSEGV, when the growth is refused)
        return _libc.syscall(ctypes.c_long(228), ctypes.c_long(1), ctypes.c_void_p(to)) == 0

    if _libc.mprotect(ctypes.c_void_p(s + _P), _P, 0) != 0:
        return info + f"; mprotect split failed errno {ctypes.get_errno()}", 0
    grown, refused = 0, None
    step = lim - 2 * _P
    for _ in range(100000):
        target = s - step  # the lowest piece [s, s + 4 KB) grows to step + 4 KB <= the stack limit
        if grow(target):
            grown += s - target
            s = target
            _libc.mprotect(ctypes.c_void_p(s + _P), _P, 0)
            continue
        if step > _P:
            step = max(_P, (step // 2) & ~(_P - 1))
            continue
        refused = f"a 4 KB stack growth refused (EFAULT) after {grown >> 20} MB of stack growth"
        break
    if cleanup:
        _libc.munmap(ctypes.c_void_p(s), start + 2 * _P - s)
    return info + "; " + (refused or f"never refused ({grown >> 20} MB grown)"), grown


print("RT-DAMAGE kernel:", _stack_fill()[0])


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        raise NotImplementedError("no answer: this submission only probes the memory cap")

    def step(self, closure=None):
        raise NotImplementedError
