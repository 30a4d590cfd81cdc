"""Time the autograder on a synthetic class: N students x every assignment, with 1 and 2 workers.

    .venv/bin/python benchmarks/grade_class.py                  # 100 students, workers 1 and 2 (long: see below)
    .venv/bin/python benchmarks/grade_class.py --students 10 --workers 1,2,4
    .venv/bin/python benchmarks/grade_class.py --quick          # 2 students, 1 worker: checks the script runs

Not a ``bench_*.py`` script (``make bench`` would take an hour with it): run it by hand. Each
run releases a copy of the course (every assignment whose text sources are up to date), fills
``submitted/`` with N students per assignment (6 in 10 solve everything, 1 in 10 hands in the
release untouched, 3 in 10 carry the wrong-answer corpus, a mistake per exercise) and runs
``autograder.grading.grade.grade`` on a fresh copy for each worker count. It prints, and writes to
``_build/autograder/grade_class.json``:

- wall time per worker count, and the speedup of each over 1 worker;
- the notebooks' own test time: the seconds their cells ran in the kernel (what grading the
  notebook costs at least), averaged over the class;
- the overhead per notebook beyond that, with 1 worker: wall / notebooks - test time (kernel
  start-up, nbgrader's pre- and post-processing, the judge, merging), and its parts.
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # the synthetic class is a test fixture

import synthetic_classes  # noqa: E402
from autograder import build, release  # noqa: E402
from autograder.course import Course  # noqa: E402
from autograder.grading.grade import grade  # noqa: E402


def releasable(candidates):
    """The assignments whose generated notebooks are up to date (others are being written)."""
    stale = {p.parent.name for p in build.build_sources(check=True)}
    return [a for a in candidates if a not in stale]


def fill_class(course_dir, assignments, students):
    for name in assignments:
        normal = {st.id.split("-", 1)[1]: st for st in synthetic_classes.normal_students(course_dir, name)}
        wrong = [st for key, st in normal.items() if key.startswith("wrong-")]
        for i in range(students):
            kind = i % 10
            st = normal["solutions"] if kind < 6 else normal["untouched"] if kind == 6 else wrong[i % len(wrong)] \
                if wrong else normal["solutions"]
            folder = course_dir / "submitted" / f"s{i:03d}" / name
            folder.mkdir(parents=True)
            (folder / f"{name}.ipynb").write_bytes(st.data())
            (folder / "timestamp.txt").write_text(synthetic_classes.ON_TIME.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))


def measure(course_dir, workers):
    course = Course(course_dir)
    start = time.perf_counter()
    records, summary = grade(course, workers=workers, quiet=True)
    wall = time.perf_counter() - start
    errors = [r for r in records if r["error"]]
    test = [sum(c["seconds"] for c in r["cells"].values()) for r in records]
    parts = {key: statistics.mean(r["timings"].get(key, 0.0) for r in records)
             for key in ("kernel_start_s", "execute_s", "job_s")}
    solved = [r for r in records if int(r["student"][1:]) % 10 < 6]
    untouched = [r for r in records if int(r["student"][1:]) % 10 == 6]
    wrong = {r["assignment"]: r for r in records if int(r["student"][1:]) % 10 > 6 and r["auto_score"] < r["max_score"]}
    print(f"  solutions at full marks: {sum(r['auto_score'] == r['max_score'] for r in solved)}/{len(solved)}; "
          f"untouched at 0: {sum(r['auto_score'] == 0 for r in untouched)}/{len(untouched)}; "
          f"assignments where the wrong answers lose points: {len(wrong)}")
    for r in solved:
        if r["auto_score"] != r["max_score"]:
            print(f"  {r['student']}/{r['assignment']}: {r['auto_score']}/{r['max_score']} {r['notes']} {r['error']}")
    return {"workers": workers, "notebooks": len(records), "wall_s": round(wall, 1),
            "wall_per_notebook_s": round(wall / len(records), 2), "test_s_mean": round(statistics.mean(test), 2),
            "mean_parts_s": {k: round(v, 2) for k, v in parts.items()}, "errors": len(errors),
            "scores": {f"{r['student']}/{r['assignment']}": r["auto_score"] for r in records}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    parser.add_argument("--assignments", help="comma-separated (default: every up-to-date assignment)")
    parser.add_argument("--quick", action="store_true", help="2 students, 1 worker, the first assignment")
    parser.add_argument("--keep", help="build the class here and keep it")
    args = parser.parse_args()
    candidates = args.assignments.split(",") if args.assignments else build.assignments()
    assignments = releasable(candidates)
    skipped = sorted(set(candidates) - set(assignments))
    students, worker_counts = args.students, [int(w) for w in args.workers.split(",")]
    if args.quick:
        students, worker_counts, assignments = 2, [1], assignments[:1]
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="grade-class-"))
    print(f"{students} students x {len(assignments)} assignments ({', '.join(assignments)})"
          + (f"; skipped (sources out of date): {', '.join(skipped)}" if skipped else ""))
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    template = synthetic_classes.course_copy(base / "template", assignments)
    release.release(Course(template), assignments, base / "student", make_zip=False)
    fill_class(template, assignments, students)
    results = []
    for workers in worker_counts:
        run_dir = base / f"workers-{workers}"
        shutil.copytree(template, run_dir)
        result = measure(run_dir, workers)
        results.append(result)
        print(f"workers {workers}: {result['notebooks']} notebooks in "
              f"{result['wall_s']:.1f} s ({result['wall_per_notebook_s']:.2f} s each); errors: {result['errors']}")
        shutil.rmtree(run_dir, ignore_errors=True)
    one = next((r for r in results if r["workers"] == 1), None)
    if one:
        overhead = one["wall_per_notebook_s"] - one["test_s_mean"]
        print(f"test time per notebook (its cells in the kernel): {one['test_s_mean']:.2f} s")
        print(f"overhead per notebook beyond its test time (1 worker): {overhead:.2f} s; "
              f"mean parts: {one['mean_parts_s']}")
        for r in results:
            if r["workers"] != 1:
                print(f"speedup with {r['workers']} workers: {one['wall_s'] / r['wall_s']:.2f}x")
        same = all(r["scores"] == one["scores"] for r in results)
        print(f"same scores in every run: {'yes' if same else 'NO'}")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    out = ROOT / "_build" / "autograder"
    out.mkdir(parents=True, exist_ok=True)
    report = {"date": datetime.datetime.now().isoformat(timespec="seconds"), "students": students,
              "assignments": assignments, "cpus": os.cpu_count(),
              "runs": [{k: v for k, v in r.items() if k != "scores"} for r in results]}
    (out / ("grade_class_quick.json" if args.quick else "grade_class.json")).write_text(json.dumps(report, indent=1) + "\n")
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
