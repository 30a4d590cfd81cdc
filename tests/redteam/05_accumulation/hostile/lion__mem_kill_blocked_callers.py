# attack: disrupt the allocation watcher: 150 forked children (one at a time, this kernel's own) each ask for
#   1 TB in a loop and are SIGKILLed by the parent a few hundred microseconds later, often while the listener
#   holds their notification (the caller's /proc entry vanishes under it, its reply has no one to go to); a
#   listener that dies of it leaves big mmaps failing with ENOSYS and reports nothing more; then the kernel
#   itself asks for 300 MB (fits) and for 1.5 GB (refused), catching the error; no answer
# expect: 0 points for lion; integrity.csv row (stopped at a limit); the 300 MB request still granted; batch
#   continues
import ctypes, ctypes.util, os, random, signal, time

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
FAILED = (None, 2**64 - 1)
_killed = 0
for _ in range(150):
    _pid = os.fork()
    if _pid == 0:
        try:
            for _ in range(100000):
                _libc.mmap(None, 2**40, 3, 0x22, -1, 0)
        finally:
            os._exit(0)
    time.sleep(random.uniform(0.0001, 0.002))
    try:
        os.kill(_pid, signal.SIGKILL)
        _killed += 1
    except OSError:
        pass
    os.waitpid(_pid, 0)
print("RT-DAMAGE children killed mid-request:", _killed)
for _n, _what in ((300 * 2**20, "300 MB"), (1536 * 2**20, "1.5 GB")):
    _a = _libc.mmap(None, _n, 3, 0x22, -1, 0)
    print(f"RT-DAMAGE then {_what}:", "errno %d" % ctypes.get_errno() if _a in FAILED else "granted")
    if _a not in FAILED:
        _libc.munmap(_a, _n)


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        raise NotImplementedError("no answer: this submission only attacks the allocation watcher")

    def step(self, closure=None):
        raise NotImplementedError
