"""Shared by the benchmark scripts: one BLAS thread, chibigrad importable, interleaved timing.

Import this module before numpy: BLAS reads its thread count when numpy loads.
"""
import os
import statistics
import sys
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one thread: ratios measure the engine, not the BLAS scheduler

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

QUICK = "--quick" in sys.argv or os.environ.get("CHIBIGRAD_BENCH_QUICK") == "1"
"""Tiny sizes, to check that a script still runs (tests/test_benchmarks.py); its numbers mean nothing."""


def interleaved(functions, repeats, block=1):
    """Median CPU seconds per call of each function, calling them in turn ``repeats`` times
    (``block`` consecutive calls a turn, timed together).

    CPU time of this process (one thread) rather than wall time, so other
    processes sharing the machine's cores do not count; interleaving spreads
    what remains (CPU frequency, caches) over all functions alike, so their
    ratio stays meaningful.
    """
    times = {name: [] for name in functions}
    for _ in range(repeats):
        for name, fn in functions.items():
            start = time.process_time()
            for _ in range(block):
                fn()
            times[name].append((time.process_time() - start) / block)
    return {name: statistics.median(ts) for name, ts in times.items()}


def report(label, value, target=None, unit="x"):
    """One result line: ``label: 1.07x (target <= 1.10x)``."""
    line = f"{label}: {value:.2f}{unit}"
    if target is not None:
        line += f" (target <= {target:.2f}{unit}: {'ok' if value <= target else 'OVER'})"
    print(line)
