"""The judge sees from outside a kernel that the address-space cap refused its allocations, even when the
kernel caught its own MemoryError (``judge.kernel_memory``, ``judge.reached_cap``; the red team's
``05_accumulation/lion__memory_hog`` is its integrity.csv row in test_redteam.py). Fast: two small processes."""
import resource
import subprocess
import sys

import pytest

from autograder.grading import judge

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
