"""The ``autograder`` command line (also ``python -m autograder``). ``autograder --help`` lists the commands."""
import argparse
import logging
import os
import sys

USAGE = """\
The term in a few commands (run from the repository; --course defaults to notebooks/):

  autograder release 01_graphs --due 01_graphs=2030-01-15T23:59   student bundle: build/student/ and .zip
  autograder late-policy --percent-per-day 10 --zero-after-days 5
  autograder collect canvas-submissions.zip --roster canvas-grades.csv --assignment 01_graphs [--dry-run]
  autograder undo-collect                               put back what the latest collect replaced
  autograder extend STUDENT 01_graphs --days 2 --reason "..."   autograder excuse STUDENT 01_graphs --reason "..."
  autograder grade --workers 8                          autograde everything pending (or: grade 01_graphs)
  autograder feedback                                   feedback/<student>/<assignment>/*.html, hidden tests redacted
  autograder feedback-zip 01_graphs                     reports/canvas-feedback-01_graphs.zip for Canvas's Re-Upload
  autograder adjust STUDENT 01_graphs walk 1.5 --reason "..."   a score override, shown in export and report
  autograder export --canvas canvas-grades.csv          reports/grades.csv, grades-long.csv, canvas-import.csv
  autograder report                                     reports/report.html
  autograder integrity                                  reports/integrity.csv
  autograder similarity 01_graphs                       reports/similarity.html: pairs whose own code is alike

A big class on a Slurm cluster (from the login node, the course on the shared file system):

  autograder slurm 01_graphs --tasks 20 --cpus-per-task 16   one array task per shard, then a merge job
"""


def _parser():
    parser = argparse.ArgumentParser(prog="autograder", description="The chibigrad course's autograder (nbgrader).",
                                     epilog=USAGE, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--course", help="the course directory (default: notebooks/ of this repository)")
    parser.add_argument("--db", help="the gradebook's SQLAlchemy URL (default: sqlite in the course directory)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("release", help="generate assignments and write the student bundle (folder and zip)")
    p.add_argument("assignments", nargs="*", help="the assignments to release (or --all)")
    p.add_argument("--all", action="store_true", help="release every assignment of the course")
    p.add_argument("--dest", help="default: build/student (and build/student.zip)")
    p.add_argument("--due", action="append", default=[], metavar="ASSIGNMENT=WHEN",
                   help="due date, e.g. 01_graphs=2030-01-15T23:59 (UTC unless a zone is given); repeatable")
    p.add_argument("--no-zip", action="store_true")

    p = sub.add_parser("collect", help="import submissions from a folder or an LMS zip (Canvas, Moodle)")
    p.add_argument("source")
    p.add_argument("--roster", help="Canvas's gradebook export (Student,ID,SIS User ID,SIS Login ID,Section,...) "
                                    "or nbgrader's CSV (id,first_name,last_name,email,lms_user_id)")
    p.add_argument("--assignment", help="every notebook in SOURCE is for this assignment")
    p.add_argument("--timestamp", help="submission time for all (default: Canvas's LATE tag, else the zip's times)")
    p.add_argument("--dry-run", action="store_true", help="say what would be placed and replaced; change nothing")
    p.add_argument("--force", action="store_true", help="place files named for another assignment anyway")

    sub.add_parser("undo-collect", help="undo the latest collect: submissions, records, gradebook as before it")

    p = sub.add_parser("extend", help="give a student more time for an assignment")
    p.add_argument("student")
    p.add_argument("assignment")
    p.add_argument("--days", required=True, help="days after the due date (0 removes the extension)")
    p.add_argument("--reason", default="")

    p = sub.add_parser("excuse", help="excuse a student from an assignment (EX in Canvas)")
    p.add_argument("student")
    p.add_argument("assignment")
    p.add_argument("--reason", required=True)
    p.add_argument("--undo", action="store_true", help="the student is no longer excused")

    p = sub.add_parser("adjust", help="override the points of one exercise, with a reason")
    p.add_argument("student")
    p.add_argument("assignment")
    p.add_argument("exercise")
    p.add_argument("points", help="the points to give, or 'auto' to go back to the autograder's")
    p.add_argument("--reason", required=True)

    p = sub.add_parser("late-policy", help="show or set the late penalty export applies")
    p.add_argument("--percent-per-day", type=float, help="percent of the score lost per started day late")
    p.add_argument("--zero-after-days", type=float, help="0 points when more than this many days late")
    p.add_argument("--none", action="store_true", help="no late penalty")

    p = sub.add_parser("grade", help="autograde pending submissions in parallel")
    p.add_argument("assignment", nargs="?")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--shard", metavar="I/N", help="grade the I-th of N slices into grading/shards/ (then `merge`)")
    p.add_argument("--force", action="store_true", help="regrade everything, not only new or changed submissions")
    p.add_argument("--student", action="append", help="only this student (repeatable)")
    p.add_argument("--cell-timeout", type=int, help="seconds per cell (default: Execute.timeout in nbgrader_config.py)")
    p.add_argument("--notebook-timeout", type=int, help="seconds per notebook (default: max(600, 10 x cell timeout))")
    p.add_argument("--memory-mb", type=int, help="address-space cap of each kernel process (default 2048)")
    p.add_argument("--max-processes", type=int, help="processes a notebook may run at once (default 64)")
    p.add_argument("--no-landlock", action="store_true", help="do not confine kernels with Landlock (debugging)")
    p.add_argument("--scratch", help="folder for the workers' scratch courses (default: the system temp dir)")

    p = sub.add_parser("merge", help="merge shard results into the gradebook")
    p.add_argument("paths", nargs="*", help="shard folders (default: all under grading/shards/)")
    p.add_argument("--allow-missing", action="store_true",
                   help="merge although some shards did not finish; what they did not grade stays pending")

    p = sub.add_parser("slurm", help="grade on a Slurm cluster: a job array of shards, then a merge job")
    p.add_argument("assignment", nargs="?", help="default: every assignment")
    p.add_argument("--tasks", type=int, default=3, help="array tasks, one shard each (default 3)")
    p.add_argument("--cpus-per-task", type=int, default=2, help="grading workers per task (default 2)")
    p.add_argument("--mem", help="memory per task, as sbatch takes it (e.g. 16G; default: the partition's)")
    p.add_argument("--partition", help="default: the cluster's default partition")
    p.add_argument("--time", help="time limit per task, as sbatch takes it (e.g. 02:00:00)")
    p.add_argument("--dry-run", action="store_true", help="print the job scripts; submit nothing")

    p = sub.add_parser("feedback", help="per-student HTML feedback, hidden tests redacted")
    p.add_argument("assignment", nargs="?")
    p.add_argument("--student", action="append")
    p.add_argument("--reveal-hidden", action="store_true", help="keep hidden tests and their traceback lines")

    p = sub.add_parser("feedback-zip", help="an assignment's feedback as a zip for Canvas's Re-Upload Submissions")
    p.add_argument("assignment")

    p = sub.add_parser("export", help="grades CSVs: wide, long, and (--canvas) one Canvas's Import accepts")
    p.add_argument("--output", help="default: reports/grades.csv")
    p.add_argument("--canvas", metavar="GRADEBOOK_EXPORT.csv",
                   help="Canvas's gradebook export (Grades > Export); writes reports/canvas-import.csv for Grades > Import")

    p = sub.add_parser("report", help="HTML report with figures")
    p.add_argument("--output", help="default: reports/report.html")

    p = sub.add_parser("similarity", help="pairs of submissions whose own code is alike (reports/similarity.html)")
    p.add_argument("assignment")
    p.add_argument("--threshold", type=float, default=0.5, help="pairs at or above this share go into the page")

    p = sub.add_parser("integrity", help="edited locked cells, deleted cells, changed kernels, tampering")
    p.add_argument("--output", help="default: reports/integrity.csv")
    return parser


def _shard(text):
    try:
        index, count = (int(x) for x in text.split("/"))
    except ValueError:
        raise SystemExit(f"--shard {text}: expected I/N, e.g. 3/10") from None
    if not 1 <= index <= count:
        raise SystemExit(f"--shard {text}: I must be between 1 and N")
    return index, count


def main(argv=None):
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    from .course import Course
    course = Course(args.course, args.db)
    command = args.command
    if command == "release":
        from .release import parse_due, release
        due = {}
        for item in args.due:
            name, _, when = item.partition("=")
            due[name] = parse_due(when)
        if not args.assignments and not args.all:
            names = course.source_assignments()
            print(f"release without an assignment releases all {len(names)}: {', '.join(names)}\n"
                  "name the ones to release (e.g. `release 01_graphs`), or add --all")
            return 2
        dest, archive = release(course, args.assignments, args.dest, due, make_zip=not args.no_zip, log=print)
        print(f"student bundle: {dest}" + (f" and {archive}" if archive else ""))
    elif command == "collect":
        from .collect import collect, format_rows
        from .release import parse_due
        when = parse_due(args.timestamp) if args.timestamp else None
        rows = collect(course, args.source, args.roster, args.assignment, when, args.dry_run, args.force)
        print(("dry run, nothing changed: " if args.dry_run else "") + format_rows(rows), end="")
    elif command == "undo-collect":
        from .collect import undo
        print("\n".join(undo(course)))
    elif command in ("extend", "excuse", "adjust", "late-policy"):
        from . import policy
        print(getattr(policy, command.replace("-", "_"))(course, args))
    elif command == "grade":
        from .grading.grade import grade
        settings = {k: v for k, v in {"cell_timeout": args.cell_timeout, "notebook_timeout": args.notebook_timeout,
                                      "memory_mb": args.memory_mb, "max_processes": args.max_processes}.items()
                    if v is not None}
        if args.no_landlock:
            settings["landlock"] = False
        records, summary = grade(course, args.assignment, args.workers, _shard(args.shard) if args.shard else None,
                                 args.force, args.student, settings, args.scratch)
        _print_grade_summary(records, summary, args.shard)
    elif command == "merge":
        from .grading.grade import UnfinishedShards, merge
        try:
            records, skipped = merge(course, args.paths, args.allow_missing)
        except UnfinishedShards as unfinished:
            _print_unfinished(course, unfinished.missing)
            return 1
        print(f"merged {len(records)} submission(s)" + (f"; skipped {len(skipped)}:" if skipped else ""))
        for line in skipped:
            print("  " + line)
    elif command == "slurm":
        from .slurm import submit
        submit(course, args.assignment, args.tasks, args.cpus_per_task, args.mem, args.partition, args.time, args.db,
               args.dry_run)
    elif command == "feedback":
        from .feedback import feedback
        written = feedback(course, args.assignment, args.student, reveal_hidden=args.reveal_hidden)
        print(f"wrote {len(written)} feedback file(s) under {course.feedback}")
    elif command == "feedback-zip":
        from .export import feedback_zip
        path, left_out = feedback_zip(course, args.assignment)
        print(f"wrote {path} (Canvas > {args.assignment} > Re-Upload Submissions)")
        if left_out:
            print(f"not in it (their submission did not come from a Canvas zip): {', '.join(left_out)}")
    elif command == "export":
        from .export import export
        for path in export(course, args.output, args.canvas):
            print(f"wrote {path}")
    elif command == "report":
        from .report import report
        print(f"wrote {report(course, args.output)}")
    elif command == "similarity":
        from .similarity import similarity
        path, pairs, empty = similarity(course, args.assignment, args.threshold)
        for score, a, b, _ in pairs[:10]:
            print(f"  {score:5.0%}  {a}  {b}")
        print(f"wrote {path} ({sum(p[0] >= args.threshold for p in pairs)} pair(s) at or above {args.threshold:.0%}"
              + (f"; no code of their own: {', '.join(empty)}" if empty else "") + ")")
    elif command == "integrity":
        from .integrity import integrity, format_findings
        path, findings = integrity(course, args.output)
        print(format_findings(findings), end="")
        print(f"wrote {path}")
    return 0


def _print_unfinished(course, missing):
    from .slurm import rerun_commands
    for count, shards in missing.items():
        print(f"shard(s) {', '.join(map(str, shards))} of {count} did not finish "
              f"(no grading/shards/I-of-{count}/COMPLETE): nothing merged")
        on_slurm, here = rerun_commands(course, count, shards)
        if on_slurm:
            print("run them again on Slurm, then merge when they succeed:\n" + "\n".join("  " + c for c in on_slurm))
        print(("or here:" if on_slurm else "run them again (with the assignment the other shards graded, if any):")
              + "\n" + "\n".join("  " + c for c in here))
    print("(`autograder merge --allow-missing` merges what finished; a plain `grade` then grades the rest)")


def _print_grade_summary(records, summary, shard):
    if not records:
        print("nothing to grade: every submission is graded and unchanged (use --force to regrade)")
        return
    statuses = {}
    for r in records:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    print(f"graded {len(records)} submission(s) with {summary['workers']} worker(s) in {summary['wall_s']:.1f} s: "
          + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())))
    if not summary.get("landlock_abi"):
        print("note: Landlock is not available here; submissions ran without file-system confinement: one that "
              "searched this machine could have changed any student's score unseen (autograder/README.md: grade in a "
              "container, a VM or as a dedicated user)")
    for r in sorted(records, key=lambda r: (r["assignment"], r["student"])):
        if r["notes"] or r["error"]:
            print(f"  {r['student']}/{r['assignment']} {r['auto_score']:g}/{r['max_score']:g}: "
                  + "; ".join(r["notes"] + ([r["error"].strip().splitlines()[-1]] if r["error"] else [])))
    for line in summary.get("guard", []):
        print("  WARNING: " + line)
    _print_not_graded(records)
    if shard:
        print(f"results in grading/shards/{shard.replace('/', '-of-')}/; run `autograder merge` when every shard is done")
    print(f"log: {summary['log']}")


def _print_not_graded(records):
    """Once per exercise, loudly: points the judge could not grade on this machine (blank, not 0)."""
    cells = {}
    for r in records:
        for name in r.get("not_graded", []):
            cells.setdefault((r["assignment"], name), []).append(r["student"])
    for (assignment, name), students in sorted(cells.items()):
        print(f"*** NOT GRADED: {assignment}:{name.removesuffix('-tests')} on {len(students)} submission(s): it needs "
              "a real CUDA device and this machine has none. Its points are blank in the gradebook and the export "
              "(not 0); grade this assignment on a GPU machine to score them (notebooks/README.md, 09_gpu). ***")


if __name__ == "__main__":
    sys.exit(main())
