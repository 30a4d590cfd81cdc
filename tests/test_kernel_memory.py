"""The judge sees from outside a kernel that the address-space cap refused its allocations, even when the
kernel caught its own MemoryError (``judge.kernel_memory``, ``judge.reached_cap``; the red team's
``05_accumulation/lion__memory_hog`` is its integrity.csv row in test_redteam.py). Fast: two small processes."""
import errno
import json
import platform
import re
import resource
import subprocess
import sys

import pytest

from autograder.grading import judge, sandbox

CAP = 1 << 30
MSEAL = tuple(int(n) for n in re.findall(r"\d+", platform.release())[:2]) >= (6, 10)
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
import ctypes, json, mmap, os, resource, signal, subprocess, sys, tempfile, time
import numpy as np
from autograder.grading import sandbox
cap, events = int(sys.argv[1]), os.open(sys.argv[2], os.O_WRONLY | os.O_APPEND)
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
watcher = sandbox.watch_allocations(events, cap)
seen = {"watcher": watcher, "a program before arming": subprocess.run(["true"]).returncode}  # the kernel's start-up
impostor = os.fork()  # a later child with the watcher's name is not taken for it
if impostor == 0:
    ctypes.CDLL(None).prctl(15, sandbox.WATCHER_NAME.encode(), 0, 0, 0)
    signal.pause()
time.sleep(0.2)
seen["found"] = sandbox.allocation_watcher(os.getpid()) == watcher
with open(f"/proc/{watcher}/status") as f:  # its own allocations never wait for itself
    seen["watcher's filters"] = next(int(line.split()[1]) for line in f if line.startswith("Seccomp_filters:"))
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


def in_a_child(block, cells=1):  # a forked child fills its own address space with blocks until one is refused
    pid = os.fork()
    if pid == 0:
        kept = []
        try:
            while True:
                kept.append(np.empty((cells, block), dtype=np.uint8))
        except MemoryError:
            os._exit(1)
    return None if os.waitpid(pid, 0)[1] else "allocated"


def grows_down():  # a mapping that a page fault below it grows, as a stack does
    return libc.mmap(None, 1 << 16, 3, 0x122, -1, 0) != failed or None  # MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN


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
                       ("in a child", lambda: in_a_child(cap // 16)),
                       ("small, in a child", lambda: in_a_child(1 << 20, 3)),
                       ("grows down", grows_down),
                       ("run a program", lambda: sandbox.arm_watcher() or subprocess.run(["true"]))):
    try:
        seen[name] = "allocated" if allocate() is not None else "refused"
    except (MemoryError, OSError):
        seen[name] = "refused"
with open("/proc/self/maps") as f:
    low, high = next([int(n, 16) for n in line.split()[0].split("-")] for line in f
                     if line.rstrip().endswith("[stack]"))
seen["stack"] = [high - low, *resource.getrlimit(resource.RLIMIT_STACK)]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
seen["split the stack"] = libc.mprotect(ctypes.c_void_p(low), ctypes.c_size_t(4096), 1) and ctypes.get_errno()
seen["unguard it"] = libc.munmap(ctypes.c_void_p(low - 4096), ctypes.c_size_t(4096)) and ctypes.get_errno()
print(json.dumps(seen), flush=True)
"""


def watched(script, tmp_path):
    """Run ``script`` (it starts the watcher under a cap of ``CAP``): ``(what it printed as JSON, its events)``."""
    events = tmp_path / "events.jsonl"
    events.touch()
    done = subprocess.run([sys.executable, "-c", script, str(CAP), str(events)], capture_output=True, text=True,
                          timeout=60, start_new_session=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), [json.loads(line) for line in events.read_text().splitlines()]


@pytest.mark.skipif(not sandbox.seccomp_supported(), reason="seccomp user notification: Linux x86_64 and aarch64")
def test_the_allocation_watcher_reports_refusals_the_process_caught(tmp_path):
    """A request far past the cap leaves the peak low (``reached_cap`` cannot see it): the watcher, a process the
    sandboxed one cannot signal, reports each refused request as an event, whichever call made it (malloc's
    mmap, the mmap module, brk, System V shared memory) and whichever process (a forked child, whose peak nothing
    reads), and lets allowed ones through (mapping again in place what is reserved grows nothing)."""
    seen, lines = watched(WATCHED, tmp_path)
    assert seen.pop("watcher"), "seccomp's user notification is available on this OS kernel"
    assert seen.pop("found"), "the grader's watchdog can tell the watcher from the notebook's processes"
    assert seen.pop("a program before arming") == 0, "programs are refused from arm_watcher() on, not before"
    assert seen.pop("watcher's filters") == 0, "forked before the filter: it is not told of its own calls"
    assert seen.pop("killed", False) is False, "Landlock (ABI 6+) keeps the sandboxed process from signalling it"
    size, soft, hard = seen.pop("stack")
    assert size == soft == hard <= sandbox.STACK_BYTES, "the stack limit pinned, the main stack mapped to it: " \
        f"a stack grows without a call to watch {seen}"
    split, unguard = seen.pop("split the stack"), seen.pop("unguard it")
    if MSEAL:  # a split stack's lower part could grow by the limit again, but for the sealed page below it
        assert split == unguard == errno.EPERM, seen
        assert [detail for kind, detail in lines if kind == "sealed"] == [
            "mprotect over the sealed stack", "munmap over the sealed stack"], lines
    assert seen.pop("quarter") == seen.pop("in place") == "allocated" and set(seen.values()) == {"refused"}, seen
    assert [detail for kind, detail in lines if kind == "program-refused"] == ["execve"], lines
    details = [detail for kind, detail in lines if kind == "memory-refused" and "asked for" in detail]
    assert [detail for kind, detail in lines if kind == "memory-refused" and detail not in details] == [
        "a mapping that grows by itself (MAP_GROWSDOWN) refused: its growth makes no call to watch"], lines
    asked = {int(detail.split(" MB")[0].replace(",", "")) for detail in details}
    assert {size >> 10 for size in asked if size >= 1024} == {3, 4, 5, 6, 8}, \
        f"one size for each refused route (sbrk, malloc, shmat, mmap): {lines}"
    assert {CAP >> 24, 3} <= asked, f"each child's refused block (64 MB; 3 MB, however small): {lines}"
    assert 3 * CAP >> 23 not in asked, f"mapping again in place what is reserved grows nothing: {lines}"
    assert all(f"of {CAP >> 20:,} MB in use" in detail and "may have" not in detail for detail in details), lines


RACE = """
import ctypes, json, os, resource, sys, threading, time
from autograder.grading import sandbox
cap, events = int(sys.argv[1]), os.open(sys.argv[2], os.O_WRONLY | os.O_APPEND)
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
sandbox.watch_allocations(events, cap)
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype, libc.mmap.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t] + [ctypes.c_int] * 3 + [
    ctypes.c_long]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
busy_bytes, stop = 256 << 20, threading.Event()
busy = libc.mmap(None, busy_bytes, 3, 0x22, -1, 0)


def hold_lock():  # faulting a block in holds the address space's lock: an mmap let go on waits for it
    while not stop.is_set():
        libc.madvise(busy, busy_bytes, 23)  # MADV_POPULATE_WRITE
        libc.madvise(busy, busy_bytes, 4)  # MADV_DONTNEED


start, got = threading.Barrier(2), [None, None]


def ask(i, size):
    start.wait()
    got[i] = libc.mmap(None, size, 3, 0x22, -1, 0)


holder = threading.Thread(target=hold_lock)
holder.start()
time.sleep(0.05)
with open("/proc/self/status") as f:
    used = next(int(line.split()[1]) << 10 for line in f if line.startswith("VmSize:"))
size = (cap - used - (48 << 20)) * 6 // 10  # each fits alone, not both (two threads' stacks are 16 MB)
askers = [threading.Thread(target=ask, args=(i, size)) for i in range(2)]
for t in askers:
    t.start()
for t in askers:
    t.join()
stop.set()
holder.join()
print(json.dumps({"size": size, "refused": sum(g in (None, ctypes.c_void_p(-1).value) for g in got)}), flush=True)
"""


@pytest.mark.skipif(not sandbox.seccomp_supported(), reason="seccomp user notification: Linux x86_64 and aarch64")
def test_two_threads_asking_at_once_are_counted_together(tmp_path):
    """Two requests, each fitting alone, made at once while another thread holds the address space's lock: the
    watcher lets the first go on, and reads the address space for the second before the first is mapped. Counted
    alone, the second fits and the refusal went unreported (an outside red team's race); counted with the calls
    still going on, it is reported, as refused or as one that may have been."""
    seen, lines = watched(RACE, tmp_path)
    assert seen["refused"] == 1, seen
    assert any(detail.startswith(f"{seen['size'] / 2**20:,.0f} MB asked for") for _, detail in lines), (seen, lines)


def test_forked_copies_count_their_shared_memory_once():
    """The watchdog's total of a kernel and the processes it started counts a page that forked copies share
    once (proportional sizes), not once per copy (resident sizes): 20 sleeping copies of a process holding
    100 MB use about what it uses, not 20 times that."""
    import os
    import signal
    import numpy as np
    held = np.ones(100 << 17)  # 100 MB, touched
    children = []
    for _ in range(20):
        pid = os.fork()
        if pid == 0:
            signal.pause()
            os._exit(0)
        children.append(pid)
    try:
        found = {pid: rss for pid, rss in sandbox.descendants().items() if pid in children}
        ours = found[os.getpid()] = int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        assert len(found) == 21 and sum(found.values()) > 20 * held.nbytes
        assert held.nbytes < sandbox.memory_in_use(found) < ours + (40 << 20)  # what this test's process uses, once
        assert sandbox.memory_in_use({max(children) + 10**6: 1 << 40}) == 0  # gone: uses nothing
    finally:
        for pid in children:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
