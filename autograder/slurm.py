"""``slurm``: grade a class on a Slurm cluster, one array task per shard, then ``merge``.

The two job scripts are written into ``grading/slurm/`` of the course (on the cluster's shared file
system), so the instructor can read them and resubmit a failed shard alone: ``grade.sbatch`` is
the array (task I runs ``grade --shard I/N`` with its scratch on the node's local disk),
``merge.sbatch`` the job that waits for every task to succeed (``afterok``) and merges. N is
written into the array script, not read from ``$SLURM_ARRAY_TASK_COUNT``: a resubmitted
``--array=2`` has a count of 1, and its task must still grade the 2nd of N slices.
"""
import datetime
import json
import shlex
import shutil
import subprocess
import sys

import jinja2

from .grading.grade import plan

GRADE = """\
#!/bin/bash
# Written by `autograder slurm` on {{ when }}: {{ pending }} submission(s) of {{ what }} in {{ tasks }} shard(s).
# Task I grades the I-th of {{ tasks }} slices into grading/shards/I-of-{{ tasks }}/. To run failed tasks again:
#   sbatch --array=2,3 {{ path }}
#SBATCH --job-name=grade-{{ name }}
#SBATCH --array=1-{{ tasks }}
#SBATCH --cpus-per-task={{ cpus }}
{% for option in options %}#SBATCH {{ option }}
{% endfor %}#SBATCH --output={{ logs }}/grade-%A_%a.out
set -euo pipefail
# scratch on the node's local disk: kernels write nothing to the shared file system
scratch=$(mktemp -d "${TMPDIR:-/tmp}/autograder-XXXXXX")
# when the task ends, killed or not: stop what still runs in the scratch folder (a killed grader's
# workers and kernels, which Slurm does not collect where it tracks processes without cgroups), remove it
cleanup() {
    for proc in /proc/[0-9]*; do
        if [[ "$(readlink "$proc/cwd" 2>/dev/null)/" == "$scratch"/* ]]; then
            kill -KILL "${proc#/proc/}" 2>/dev/null || true
        fi
    done
    rm -rf "$scratch" 2>/dev/null || { sleep 2; rm -rf "$scratch"; }
}
trap cleanup EXIT
{{ autograder }} grade {{ assignment }}--shard "$SLURM_ARRAY_TASK_ID/{{ tasks }}" \\
    --workers "$SLURM_CPUS_PER_TASK" --scratch "$scratch"
"""

MERGE = """\
#!/bin/bash
# Written by `autograder slurm` on {{ when }}: merges the {{ tasks }} shard(s) once every array task succeeded.
#SBATCH --job-name=merge-{{ name }}
#SBATCH --cpus-per-task=1
{% for option in options %}#SBATCH {{ option }}
{% endfor %}#SBATCH --output={{ logs }}/merge-%j.out
set -euo pipefail
{{ autograder }} merge
"""


def scripts(course, assignment=None, tasks=3, cpus_per_task=2, mem=None, partition=None, time=None, db=None,
            pending=0):
    """``{"grade.sbatch": text, "merge.sbatch": text}``: ``assignment`` (default: all) in ``tasks`` shards."""
    folder = course.grading / "slurm"
    command = [sys.executable, "-m", "autograder", "--course", str(course.root)] + (["--db", db] if db else [])
    options = [f"--{name}={value}" for name, value in (("partition", partition), ("time", time)) if value]
    values = {"when": datetime.datetime.now().isoformat(timespec="seconds"), "tasks": tasks, "cpus": cpus_per_task,
              "name": assignment or "all", "what": assignment or "every assignment", "pending": pending,
              "assignment": f"{shlex.quote(assignment)} " if assignment else "",
              "logs": shlex.quote(str(folder / "logs")),
              "autograder": shlex.join(command), "path": shlex.quote(str(folder / "grade.sbatch"))}
    env = jinja2.Environment(keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    memory = [f"--mem={mem}"] if mem else []
    return {"grade.sbatch": env.from_string(GRADE).render(values, options=options + memory),
            "merge.sbatch": env.from_string(MERGE).render(values, options=options)}


def submit(course, assignment=None, tasks=3, cpus_per_task=2, mem=None, partition=None, time=None, db=None,
           dry_run=False, log=print):
    """Write the job scripts and submit them (``dry_run``: print them instead). Returns
    ``{"array": job id, "merge": job id, "tasks": N}`` (ids ``None`` on a dry run)."""
    if tasks < 1 or cpus_per_task < 1:
        raise SystemExit("--tasks and --cpus-per-task must be at least 1")
    unmerged = sorted(p.name for p in course.shards.glob("*-of-*") if p.is_dir())
    if unmerged and not dry_run:
        raise SystemExit(f"grading/shards/ holds results not merged yet ({', '.join(unmerged)}): run "
                         "`autograder merge` first (it says what is missing), or remove them")
    pending = len(plan(course, assignment))
    if not pending:
        raise SystemExit("nothing to grade: every submission is graded and unchanged")
    if tasks > pending:
        log(f"{pending} submission(s) pending: {pending} array task(s) instead of {tasks}")
        tasks = pending
    texts = scripts(course, assignment, tasks, cpus_per_task, mem, partition, time, db, pending)
    folder = course.grading / "slurm"
    if dry_run:
        for name, text in texts.items():
            log(f"# ---- {folder / name}\n{text}")
        log(f"would run: sbatch {folder / 'grade.sbatch'}, then "
            f"sbatch {' '.join(_merge_options('<its job id>'))} {folder / 'merge.sbatch'}")
        return {"array": None, "merge": None, "tasks": tasks}
    if not shutil.which("sbatch"):
        raise SystemExit("sbatch is not on the PATH: run `autograder slurm` on the cluster's login node "
                         "(or add --dry-run to see the job scripts)")
    (folder / "logs").mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        (folder / name).write_text(text)
    array = _sbatch([str(folder / "grade.sbatch")])
    merge = _sbatch(_merge_options(array) + [str(folder / "merge.sbatch")])
    jobs = {"array": array, "merge": merge, "tasks": tasks, "assignment": assignment}
    (folder / "jobs.json").write_text(json.dumps(jobs) + "\n")
    log(f"submitted job array {array} ({tasks} task(s), {pending} submission(s): grade --shard I/{tasks}) "
        f"and job {merge}, which merges once every task succeeded\n"
        f"follow them: squeue -j {array},{merge}\n"
        f"afterwards:  sacct -j {array},{merge} --format=JobID,JobName,State,ExitCode,Elapsed\n"
        f"logs:        {folder / 'logs'}/\n"
        f"if a task fails, job {merge} is cancelled; `autograder merge` then names the shards to run again")
    return jobs


def _merge_options(array):
    """The merge job waits for every task of ``array`` to succeed; it is cancelled if one fails."""
    return [f"--dependency=afterok:{array}", "--kill-on-invalid-dep=yes"]


def rerun_commands(course, count, missing):
    """How to run shards ``missing`` of ``count`` again, then merge: ``(on Slurm, here)``, each a
    list of shell lines. Slurm's only when ``autograder slurm`` submitted this split (``jobs.json``)."""
    folder = course.grading / "slurm"
    jobs = json.loads((folder / "jobs.json").read_text()) if (folder / "jobs.json").is_file() else {}
    ours = jobs.get("tasks") == count
    if ours:
        what = f"{shlex.quote(jobs['assignment'])} " if jobs.get("assignment") else ""
    else:  # which assignment the other shards were given is recorded only in jobs.json
        what = "[ASSIGNMENT] "
    root = shlex.quote(str(course.root))
    here = [f"autograder --course {root} grade {what}--shard {i}/{count}" for i in missing]
    here.append(f"autograder --course {root} merge")
    if not ours:
        return [], here
    indices = ",".join(map(str, missing))
    return [f"jobid=$(sbatch --parsable --array={indices} {shlex.quote(str(folder / 'grade.sbatch'))})",
            " ".join(["sbatch", *_merge_options("$jobid"), shlex.quote(str(folder / "merge.sbatch"))])], here


def _sbatch(args):
    result = subprocess.run(["sbatch", "--parsable", *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"sbatch {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout.strip().split(";")[0]  # "<id>" or "<id>;<cluster>"
