"""The judge sees from outside a kernel that the address-space cap refused its allocations, even when the
kernel caught its own MemoryError (``judge.kernel_memory``, ``judge.reached_cap``; the red team's
``05_accumulation/lion__memory_hog`` is its integrity.csv row in test_redteam.py). Fast: two small processes."""
import json
import resource
import subprocess
import sys

import pytest

from autograder.grading import judge, sandbox

CAP = 1 << 30
HOG = """
import sys
blocks = []
try:
    for _ in range(int(sys.argv[1])):
        blocks.append(bytearray(100 * 2**20))
except MemoryError:
    pass
print(len(blocks), flush=True)
sys.stdin.read()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("blocks, reached", [(100, True), (2, False)])
def test_a_capped_process_that_caught_its_memory_error_is_seen_from_outside(blocks, reached):
    process = subprocess.Popen([sys.executable, "-c", HOG, str(blocks)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True,
                               preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP)))
    try:
        grown = int(process.stdout.readline())  # the process is alive, its MemoryError (if any) caught
        peak, cap = judge.kernel_memory(process.pid)
    finally:
        process.communicate("")
    assert cap == CAP and peak <= CAP
    assert (grown < blocks) is reached, "the cap refused the hog's allocations, not the small one's"
    assert judge.reached_cap(peak, cap) is reached, (peak >> 20, cap >> 20)
    assert not judge.reached_cap(peak, None), "no cap, nothing refused"


WATCHED = """
import ctypes, json, mmap, os, resource, signal, sys, tempfile, time
import numpy as np
from autograder.grading import sandbox
cap, events = int(sys.argv[1]), os.open(sys.argv[2], os.O_WRONLY | os.O_APPEND)
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
watcher = sandbox.watch_allocations(events, cap)
seen = {"watcher": watcher}
impostor = os.fork()  # a later child with the watcher's name is not taken for it
if impostor == 0:
    ctypes.CDLL(None).prctl(15, sandbox.WATCHER_NAME.encode(), 0, 0, 0)
    signal.pause()
time.sleep(0.2)
seen["found"] = sandbox.allocation_watcher(os.getpid()) == watcher
os.kill(impostor, signal.SIGKILL)
os.waitpid(impostor, 0)
if sandbox.landlock_abi() >= 6:  # confined after the watcher started: it cannot be signalled from in here
    sandbox.apply_landlock(["/"], [tempfile.gettempdir()])
    try:
        os.kill(watcher, signal.SIGKILL)
        seen["killed"] = True
    except PermissionError:
        seen["killed"] = False
signal.signal(signal.SIGINT, signal.SIG_IGN)
os.killpg(0, signal.SIGINT)  # what interrupting a cell does to the kernel's process group
libc = ctypes.CDLL(None, use_errno=True)
libc.sbrk.restype = libc.shmat.restype = ctypes.c_void_p
failed = ctypes.c_void_p(-1).value


libc.mmap.restype, libc.mmap.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t] + [ctypes.c_int] * 3 + [
    ctypes.c_long]


def commit_in_place(reserved, committed):  # reserve, then map part of it again in place: nothing grows
    base = libc.mmap(None, reserved, 0, 0x4022, -1, 0)  # PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE
    placed = libc.mmap(base, committed, 3, 0x32, -1, 0)  # PROT_READ | PROT_WRITE, ... | MAP_FIXED
    libc.munmap(ctypes.c_void_p(base), ctypes.c_size_t(reserved))
    return placed if failed not in (base, placed) else None


def in_a_child(block):  # a forked child fills its own address space with blocks until one is refused
    pid = os.fork()
    if pid == 0:
        kept = []
        try:
            while True:
                kept.append(np.empty(block, dtype=np.uint8))
        except MemoryError:
            os._exit(1)
    return None if os.waitpid(pid, 0)[1] else "allocated"


def shmat(size):
    segment = libc.shmget(0, ctypes.c_size_t(size), 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0o600
    try:
        return libc.shmat(segment, None, 0) != failed
    finally:
        libc.shmctl(segment, 0, None)  # IPC_RMID


for name, allocate in (("huge", lambda: np.empty(4 * cap, dtype=np.uint8)),
                       ("quarter", lambda: np.empty(cap // 4, dtype=np.uint8)),
                       ("in place", lambda: commit_in_place(cap // 2, 3 * cap // 8)),
                       ("sbrk", lambda: libc.sbrk(ctypes.c_ssize_t(3 * cap)) != failed or None),
                       ("shmat", lambda: shmat(5 * cap) or None),
                       ("mmap module", lambda: mmap.mmap(-1, 6 * cap)),
                       ("huge again", lambda: np.empty(8 * cap, dtype=np.uint8)),
                       ("in a child", lambda: in_a_child(cap // 16))):
    try:
        seen[name] = "allocated" if allocate() is not None else "refused"
    except (MemoryError, OSError):
        seen[name] = "refused"
print(json.dumps(seen), flush=True)
"""


@pytest.mark.skipif(not sandbox.seccomp_supported(), reason="seccomp user notification: Linux x86_64 and aarch64")
def test_the_allocation_watcher_reports_refusals_the_process_caught(tmp_path):
    """A request far past the cap leaves the peak low (``reached_cap`` cannot see it): the watcher, a process the
    sandboxed one cannot signal, reports each refused request as an event, whichever call made it (malloc's
    mmap, the mmap module, brk, System V shared memory) and whichever process (a forked child, whose peak nothing
    reads), and lets allowed ones through (mapping again in place what is reserved grows nothing)."""
    events = tmp_path / "events.jsonl"
    events.touch()
    done = subprocess.run([sys.executable, "-c", WATCHED, str(CAP), str(events)], capture_output=True, text=True,
                          timeout=60, start_new_session=True)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen.pop("watcher"), "seccomp's user notification is available on this OS kernel"
    assert seen.pop("found"), "the grader's watchdog can tell the watcher from the notebook's processes"
    assert seen.pop("killed", False) is False, "Landlock (ABI 6+) keeps the sandboxed process from signalling it"
    assert seen.pop("quarter") == seen.pop("in place") == "allocated" and set(seen.values()) == {"refused"}, seen
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    asked = {int(detail.split(" MB")[0].replace(",", "")) for kind, detail in lines}
    assert {kind for kind, _ in lines} == {"memory-refused"}, lines
    assert {size >> 10 for size in asked if size >= 1024} == {3, 4, 5, 6, 8}, \
        f"one size for each refused route (sbrk, malloc, shmat, mmap): {lines}"
    assert {size >> 4 for size in asked if size < 1024} == {CAP >> 24 >> 4}, \
        f"the child's block (glibc may ask again for a page more), no in-place mapping: {lines}"
    assert all(f"of {CAP >> 20:,} MB in use" in detail for _, detail in lines), lines
