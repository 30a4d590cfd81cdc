# attack: disrupt the allocation watcher: it is this kernel's child (forked by the kernel launcher), so find it
#   without /proc (waitid WNOWAIT|WNOHANG on nearby pids answers only for one's own children: nothing else is
#   touched), SIGSTOP it (a stopped listener would leave every big mmap blocked: the kernel hangs), then
#   SIGKILL it (a dead listener: big mmaps fail with ENOSYS and nothing reports a refusal), then ask for
#   1.5 GB; no answer
# expect: 0 points for lion; the signals are refused (Landlock scope) or the kernel hangs no longer than the
#   cell timeout; batch continues; integrity.csv row (stopped at a limit) for the 1.5 GB request
import ctypes, ctypes.util, os, signal, threading

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
FAILED = (None, 2**64 - 1)


def _big_mmap(n, out):
    a = _libc.mmap(None, n, 3, 0x22, -1, 0)
    out.append("errno %d" % ctypes.get_errno() if a in FAILED else "granted")
    if a not in FAILED:
        _libc.munmap(a, n)


def _timed_mmap(n, wait=10):
    out = []
    t = threading.Thread(target=_big_mmap, args=(n, out), daemon=True)
    t.start()
    t.join(wait)
    return out[0] if out else f"still blocked after {wait} s"


_me = os.getpid()
_children = []
for _pid in list(range(max(2, _me - 200), _me)) + list(range(_me + 1, _me + 20000)):
    try:
        os.waitid(os.P_PID, _pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        _children.append(_pid)
    except ChildProcessError:
        pass
    except OSError:
        pass
print("RT-DAMAGE children of the kernel found:", _children)
for _c in _children:
    for _sig in (signal.SIGSTOP,):
        try:
            os.kill(_c, _sig)
            print(f"RT-DAMAGE SIGSTOP to {_c} delivered; 300 MB mmap:", _timed_mmap(300 * 2**20))
        except OSError as err:
            print(f"SIGSTOP to {_c} refused: {err}")
        try:
            os.kill(_c, signal.SIGCONT)
        except OSError:
            pass
for _c in _children:
    try:
        os.kill(_c, signal.SIGKILL)
        print(f"RT-DAMAGE SIGKILL to {_c} delivered")
    except OSError as err:
        print(f"SIGKILL to {_c} refused: {err}")
print("RT-DAMAGE after: 300 MB mmap:", _timed_mmap(300 * 2**20))
print("RT-DAMAGE after: 1.5 GB mmap:", _timed_mmap(1536 * 2**20))


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        raise NotImplementedError("no answer: this submission only attacks the allocation watcher")

    def step(self, closure=None):
        raise NotImplementedError
