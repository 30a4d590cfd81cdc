# attack: hang the kernel (found by lion__mem2_thread_slowdown: thread starts stopped between 700 and 800 idle
#   threads, the cell timed out and the kernel ignored the interrupt; outside the sandbox 1,500 start in 1.3 s):
#   start idle threads (256 KB stacks) 25 at a time from 600 on, up to 1,200 or 30 s, printing each batch's time
#   (flushed) and 20 small mmaps' time; then 300 MB (fits) and 3 GB (refused); no answer
# expect: 0 points for lion; integrity.csv row (stopped at a limit)
import mmap, threading, time


def _time_mmaps(n=100):
    t0 = time.perf_counter()
    for _ in range(n):
        m = mmap.mmap(-1, 65536)
        m.close()
    return (time.perf_counter() - t0) / n * 1e6


threading.stack_size(256 * 1024)
_stop = threading.Event()
_threads = []
_begin = time.perf_counter()
print(f"RT-DAMAGE 0 idle threads: mmap 64 KB {_time_mmaps():.0f} us each", flush=True)
while len(_threads) < 1200 and time.perf_counter() - _begin < 30:
    _t0 = time.perf_counter()
    try:
        for _ in range(600 if not _threads else 25):
            t = threading.Thread(target=_stop.wait, daemon=True)
            t.start()
            _threads.append(t)
    except RuntimeError as err:
        print("thread start stopped:", err)
        break
    _dt = time.perf_counter() - _t0
    print(f"RT-DAMAGE {len(_threads)} idle threads (last batch started in {_dt:.2f} s): mmap 64 KB {_time_mmaps(20):.0f} us each", flush=True)
_t0 = time.perf_counter()
try:
    _big = mmap.mmap(-1, 300 * 2**20)
    print(f"RT-DAMAGE 300 MB granted in {time.perf_counter() - _t0:.3f} s")
    _big.close()
except OSError as err:
    print("RT-DAMAGE 300 MB refused:", err)
try:
    mmap.mmap(-1, 3 * 2**30)
    print("RT-DAMAGE 3 GB granted?!")
except OSError as err:
    print("RT-DAMAGE 3 GB refused:", err)
_stop.set()
for t in _threads:
    t.join()
threading.stack_size(0)


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        raise NotImplementedError("no answer: this submission only probes the memory cap")

    def step(self, closure=None):
        raise NotImplementedError
