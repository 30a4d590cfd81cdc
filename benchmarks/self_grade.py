"""Time `make grade NB=...` (self-study) against executing the same notebook once with `jupyter nbconvert --execute`.

    .venv/bin/python benchmarks/self_grade.py                        # 01b_engine, 3 rounds
    .venv/bin/python benchmarks/self_grade.py --assignments all --rounds 1
    .venv/bin/python benchmarks/self_grade.py --quick                 # 01_graphs, one round: checks the script runs

Not a ``bench_*.py`` script (``make bench`` does not run it): run it by hand. Each assignment's solved
notebook (its source) is copied to a temporary folder; one `grade` first fills the release cache (a first
`make grade` after a change to the assignment's source makes its release), then each round runs the two
commands one after the other, alternating which goes first. Both are timed as whole commands: wall seconds
and CPU seconds (user + sys of the command and its children, the kernel included). The issue's goal
(issue 22): grade at most 1.5x the time of the execution.
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder import build  # noqa: E402

BIN = Path(sys.executable).parent


def timed(command, cwd):
    """``(wall seconds, CPU seconds)`` of ``command`` and its children; its output is checked, not printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def measure(assignment, rounds, folder):
    shutil.copytree(ROOT / "notebooks" / "source" / assignment, folder)  # with the files the notebook reads
    notebook = folder / f"{assignment}.ipynb"
    commands = {
        "grade": [sys.executable, "-m", "autograder.build", "grade", str(notebook)],
        "execute": [str(BIN / "jupyter"), "nbconvert", "--execute", "--to", "notebook", "--output",
                    str(folder / "executed.ipynb"), str(notebook)],
    }
    timed(commands["grade"], ROOT)  # the release cache, as after a first `make grade`
    times = {name: [] for name in commands}
    for i in range(rounds):
        for name in (("grade", "execute") if i % 2 == 0 else ("execute", "grade")):
            times[name].append(timed(commands[name], ROOT if name == "grade" else folder))
    return {name: (statistics.median(w for w, _ in ts), statistics.median(c for _, c in ts))
            for name, ts in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--assignments", default="01b_engine", help="comma-separated, or 'all'")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    names = build.assignments() if args.assignments == "all" else args.assignments.split(",")
    if args.quick:
        names, args.rounds = ["01_graphs"], 1
    print(f"load average {os.getloadavg()[0]:.1f}; {args.rounds} round(s); medians")
    print(f"{'assignment':22} {'grade wall':>10} {'CPU':>7} {'execute wall':>12} {'CPU':>7} {'ratio wall':>10} "
          f"{'CPU':>6}")
    with tempfile.TemporaryDirectory(prefix="self-grade-bench-") as tmp:
        for name in names:
            folder = Path(tmp) / name
            m = measure(name, args.rounds, folder)
            (gw, gc), (ew, ec) = m["grade"], m["execute"]
            print(f"{name:22} {gw:9.1f}s {gc:6.1f}s {ew:11.1f}s {ec:6.1f}s {gw / ew:9.2f}x {gc / ec:5.2f}x",
                  flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
