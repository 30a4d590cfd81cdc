"""Time ``autograder slurm`` on the one-node cluster of ``tests/test_slurm.py``: its class (24
notebooks of 05_accumulation) in 1 array task and in 3, from ``autograder slurm`` to the merged
gradebook (the merge job's end).

    .venv/bin/python benchmarks/slurm_class.py        # as root, with slurm-wlm and munge installed

Run by hand (about 3 minutes on a quiet 2-core machine). The node has 2 CPUs and each task takes
one (one grading worker), so 3 tasks run 2 at a time. Prints the wall times and the CPU time the
jobs used (slurmd's children: a measure that other load on the machine does not change much), and
writes them to ``_build/autograder/slurm_class.json``.
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


def _jobs_cpu_s(base):
    """CPU seconds of every job slurmd has run and reaped so far (its children's user + system time)."""
    pid = (Path(base) / "slurmd.pid").read_text().strip()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")  # cutime, cstime


def main():
    times = {}
    with test_slurm.one_node_cluster() as cluster, tempfile.TemporaryDirectory() as tmp:
        env = cluster["env"]
        for tasks in RUNS:
            base = Path(tmp) / f"tasks{tasks}"
            base.mkdir()
            course_dir = synthetic_classes.course_copy(base, [test_slurm.ASSIGNMENT])
            test_slurm.autograder(course_dir, "release", test_slurm.ASSIGNMENT, "--no-zip", "--dest", base / "student")
            test_slurm.autograder(course_dir, "collect", test_slurm._class(base, course_dir), "--assignment",
                                  test_slurm.ASSIGNMENT, "--timestamp", "2030-01-14T12:00")
            load, cpu = os.getloadavg()[0], _jobs_cpu_s(cluster["base"])
            start = time.perf_counter()
            test_slurm.autograder(course_dir, "slurm", test_slurm.ASSIGNMENT, "--tasks", tasks, "--cpus-per-task", 1,
                                  env=env)
            test_slurm._wait(lambda: not subprocess.run(["squeue", "-h"], env=env, capture_output=True,
                                                        text=True).stdout.strip(), 1800, "the jobs")
            wall, cpu = time.perf_counter() - start, _jobs_cpu_s(cluster["base"]) - cpu
            merged = "".join(p.read_text() for p in (course_dir / "grading" / "slurm" / "logs").glob("merge-*.out"))
            times[tasks] = {"wall_s": round(wall, 1), "jobs_cpu_s": round(cpu, 1), "load_before": load,
                            "load_after": os.getloadavg()[0], "merged": merged.strip()}
            print(f"{tasks} task(s): {wall:.1f} s, jobs' CPU time {cpu:.1f} s ({merged.strip()}; "
                  f"load {load:.1f} -> {os.getloadavg()[0]:.1f})", flush=True)
    print(f"3 tasks / 1 task: {times[1]['wall_s'] / times[3]['wall_s']:.2f}x faster")
    out = build.ROOT / "_build" / "autograder"
    out.mkdir(parents=True, exist_ok=True)
    (out / "slurm_class.json").write_text(json.dumps(times, indent=1) + "\n")


if __name__ == "__main__":
    main()
