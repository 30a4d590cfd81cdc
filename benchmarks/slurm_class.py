"""Time ``autograder slurm`` on the one-node cluster of ``tests/test_slurm.py``: its class at 24
notebooks of 05_accumulation (the test grades 12) in 1 array task and in 3, from ``autograder slurm`` to the merged
gradebook (the merge job's end).

    .venv/bin/python benchmarks/slurm_class.py        # as root, with slurm-wlm and munge installed

Run by hand (14 minutes on a heavily shared 2-core machine; results in ``benchmarks/README.md``).
The node has 2 CPUs and each task takes one (one grading worker), so 3 tasks run 2 at a time.
Prints the times and writes them to ``_build/autograder/slurm_class.json``.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # the class and the cluster are test fixtures

import synthetic_classes  # noqa: E402
import test_slurm  # noqa: E402
from autograder import build  # noqa: E402

RUNS = (1, 3)  # array tasks


def main():
    times = {}
    with test_slurm.one_node_cluster() as cluster, tempfile.TemporaryDirectory() as tmp:
        env = cluster["env"]
        for tasks in RUNS:
            base = Path(tmp) / f"tasks{tasks}"
            base.mkdir()
            course_dir = synthetic_classes.course_copy(base, [test_slurm.ASSIGNMENT])
            test_slurm.autograder(course_dir, "release", test_slurm.ASSIGNMENT, "--no-zip", "--dest", base / "student")
            test_slurm.autograder(course_dir, "collect", test_slurm._class(base, course_dir, 24), "--assignment",
                                  test_slurm.ASSIGNMENT, "--timestamp", "2030-01-14T12:00")
            load = os.getloadavg()[0]
            start = time.perf_counter()
            test_slurm.autograder(course_dir, "slurm", test_slurm.ASSIGNMENT, "--tasks", tasks, "--cpus-per-task", 1,
                                  env=env)
            test_slurm._wait(lambda: not subprocess.run(["squeue", "-h"], env=env, capture_output=True,
                                                        text=True).stdout.strip(), 1800, "the jobs")
            wall = time.perf_counter() - start
            merged = "".join(p.read_text() for p in (course_dir / "grading" / "slurm" / "logs").glob("merge-*.out"))
            times[tasks] = {"wall_s": round(wall, 1), "load_before": load, "load_after": os.getloadavg()[0],
                            "merged": merged.strip()}
            print(f"{tasks} task(s): {wall:.1f} s ({merged.strip()}; load {load:.1f} -> {os.getloadavg()[0]:.1f})",
                  flush=True)
    print(f"3 tasks / 1 task: {times[1]['wall_s'] / times[3]['wall_s']:.2f}x faster")
    out = build.ROOT / "_build" / "autograder"
    out.mkdir(parents=True, exist_ok=True)
    (out / "slurm_class.json").write_text(json.dumps(times, indent=1) + "\n")


if __name__ == "__main__":
    main()
