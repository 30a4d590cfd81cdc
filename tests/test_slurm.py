"""``autograder slurm`` against a real Slurm, and ``merge``'s report of shards that did not finish.

The slow test starts a one-node cluster of Debian's ``slurm-wlm`` on this machine (its own munged,
key and socket, slurmctld and slurmd from a ``slurm.conf`` in a temp folder: 2 CPUs, no cgroups),
grades a class of 12 notebooks in 3 array tasks, kills one task's grader halfway, resubmits it with
the command ``merge`` prints, and compares the merged gradebook and ``export`` with a plain
``grade`` of the same class. It skips, saying so, where the packages are not installed (``.ci/run``
installs them with apt) or it cannot run as root (slurmd starts jobs as their user).
"""
import contextlib
import csv
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

import synthetic_classes
from autograder import build
from autograder.course import Course
from autograder.grading import gradebook

ASSIGNMENT = "05_accumulation"  # three exercises: the cheapest notebook to grade
STUDENTS = 12  # every kind of notebook in _class at least once, 4 per task: a kill after 2 is halfway
TASKS = 3
DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "scancel", "sinfo")


def autograder(course_dir, *args, env=None, check=True):
    result = subprocess.run([sys.executable, "-m", "autograder", "--course", str(course_dir), *map(str, args)],
                            capture_output=True, text=True, timeout=600, env=env or build.nbgrader_env())
    if check and result.returncode != 0:
        raise AssertionError(f"autograder {' '.join(map(str, args))} failed:\n{result.stdout[-3000:]}\n"
                             f"{result.stderr[-3000:]}")
    return result


def _fake_shards(course_dir, folders):
    course_dir.mkdir(parents=True, exist_ok=True)
    shutil.copy(build.NOTEBOOKS / "nbgrader_config.py", course_dir)
    for name, finished in folders.items():
        (course_dir / "grading" / "shards" / name).mkdir(parents=True)
        if finished:
            (course_dir / "grading" / "shards" / name / "COMPLETE").write_text("{}\n")


# ---- fast tests ----------------------------------------------------------------------------------------------------

def test_merge_names_the_unfinished_shards_and_merges_nothing(tmp_path):
    course_dir = tmp_path / "course"
    _fake_shards(course_dir, {"1-of-3": True, "2-of-3": False, "1-of-2": True})
    slurm_dir = course_dir / "grading" / "slurm"
    slurm_dir.mkdir(parents=True)
    (slurm_dir / "jobs.json").write_text(json.dumps({"array": "7", "merge": "8", "tasks": 3, "assignment": "01_graphs"}))
    result = autograder(course_dir, "merge", check=False)
    assert result.returncode == 1
    assert "shard(s) 2, 3 of 3 did not finish" in result.stdout and "shard(s) 2 of 2 did not finish" in result.stdout
    assert f"jobid=$(sbatch --parsable --array=2,3 {slurm_dir / 'grade.sbatch'})" in result.stdout
    assert f"sbatch --dependency=afterok:$jobid --kill-on-invalid-dep=yes {slurm_dir / 'merge.sbatch'}" in result.stdout
    assert f"autograder --course {course_dir} grade 01_graphs --shard 2/3" in result.stdout
    # the 2-way split was not started by `autograder slurm`: no sbatch line for it, only the local one
    assert "--array=2\n" not in result.stdout and "grade [ASSIGNMENT] --shard 2/2" in result.stdout
    assert sorted(p.name for p in (course_dir / "grading" / "shards").iterdir()) == ["1-of-2", "1-of-3", "2-of-3"]


def test_an_empty_shard_is_finished(tmp_path):
    course_dir = tmp_path / "course"
    _fake_shards(course_dir, {"1-of-2": True})
    from autograder.grading.grade import grade, unfinished_shards
    course = Course(course_dir)
    with pytest.MonkeyPatch.context() as patch:  # nothing pending (without making a gradebook: a minute here)
        patch.setattr("autograder.grading.grade.plan", lambda *args: [])
        assert grade(course, shard=(2, 2), quiet=True)[0] == []
    assert unfinished_shards(sorted(course.shards.iterdir())) == {}


def test_the_job_scripts_grade_the_ith_of_n_slices_and_are_valid_bash(tmp_path):
    from autograder.slurm import scripts
    course_dir = tmp_path / "course"
    _fake_shards(course_dir, {})
    texts = scripts(Course(course_dir), ASSIGNMENT, tasks=4, cpus_per_task=8, mem="16G", partition="short",
                    time="01:00:00", pending=40)
    grade, merge = texts["grade.sbatch"], texts["merge.sbatch"]
    for line in ("#SBATCH --array=1-4", "#SBATCH --cpus-per-task=8", "#SBATCH --mem=16G", "#SBATCH --partition=short",
                 "#SBATCH --time=01:00:00", f'grade {ASSIGNMENT} --shard "$SLURM_ARRAY_TASK_ID/4"'):
        assert line in grade
    assert "--mem" not in merge and "#SBATCH --partition=short" in merge and merge.rstrip().endswith(" merge")
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
        assert subprocess.run(["bash", "-n", tmp_path / name]).returncode == 0


# ---- a real cluster ------------------------------------------------------------------------------------------------

def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SLURM_CONF = """\
ClusterName=chibigrad
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={base}/munge/munge.socket
CredType=cred/munge
StateSaveLocation={base}/state
SlurmdSpoolDir={base}/spool
SlurmctldPidFile={base}/slurmctld.pid
SlurmdPidFile={base}/slurmd.pid
SlurmctldLogFile={base}/slurmctld.log
SlurmdLogFile={base}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=900
NodeName={host} NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


@pytest.fixture(scope="module")
def cluster():
    missing = [name for name in DAEMONS if not shutil.which(name, path=os.environ["PATH"] + ":/usr/sbin:/sbin")]
    if missing:
        pytest.skip(f"Debian's slurm-wlm and munge are not installed (no {', '.join(missing)}): "
                    "`apt-get install slurm-wlm munge`, as .ci/run does")
    if os.geteuid() != 0:
        pytest.skip("the one-node Slurm cluster needs root (slurmd starts each job as its user)")
    with one_node_cluster() as running:
        yield running


@contextlib.contextmanager
def one_node_cluster():
    """A one-node Slurm cluster on this machine, stopped on exit: ``{"env": ..., "base": its folder}``,
    where ``env``'s ``SLURM_CONF`` points the Slurm commands at it and ``TMPDIR`` is the node's local disk."""
    base = Path(tempfile.mkdtemp(prefix="chibigrad-slurm-"))
    base.chmod(0o755)  # munged wants every folder above its socket searchable by all
    for sub in ("munge", "state", "spool", "node-local"):
        (base / sub).mkdir()
    key = base / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    conf = base / "slurm.conf"
    host = socket.gethostname().split(".")[0]
    conf.write_text(SLURM_CONF.format(host=host, base=base, ctld_port=_free_port(), slurmd_port=_free_port()))
    env = dict(build.nbgrader_env(), SLURM_CONF=str(conf), TMPDIR=str(base / "node-local"),
               PATH=build.nbgrader_env()["PATH"] + ":/usr/sbin:/sbin")
    munge = base / "munge"
    commands = [["munged", "-F", f"--socket={munge}/munge.socket", f"--key-file={key}",
                 f"--log-file={munge}/munged.log", f"--pid-file={munge}/munged.pid", f"--seed-file={munge}/munged.seed"],
                ["slurmctld", "-D", "-i", "-f", str(conf)], ["slurmd", "-D", "-f", str(conf)]]
    daemons = []
    try:
        for command in commands:
            with open(base / f"{command[0]}.out", "wb") as out:
                daemons.append(subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env))
            if command[0] == "munged":
                _wait(lambda: (munge / "munge.socket").exists(), 20, "munged to create its socket", base)
        _wait(lambda: _run(["sinfo", "-h", "-o", "%t"], env).strip() == "idle", 60, "the node to be idle", base)
        yield {"env": env, "base": base}
    finally:
        subprocess.run(["scancel", "--user", "root"], env=env, capture_output=True)
        for process in reversed(daemons):
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(base, ignore_errors=True)


def _run(command, env):
    return subprocess.run(command, capture_output=True, text=True, env=env).stdout


def _wait(condition, seconds, what, base=None):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            logs = "".join(f"\n--- {p.name}\n" + p.read_text(errors="replace")[-2000:]
                           for p in sorted(Path(base).glob("*.out")) + sorted(Path(base).glob("*.log"))) if base else ""
            raise AssertionError(f"waited {seconds} s for {what}{logs}")
        time.sleep(0.5)


def _task_states(job, env):
    """``{array task id: state}`` of a job array, from ``scontrol`` (no accounting database here, so no sacct)."""
    states = {}
    for line in _run(["scontrol", "-o", "show", "job", job], env).splitlines():
        fields = dict(item.split("=", 1) for item in line.split() if "=" in item)
        states[fields.get("ArrayTaskId", fields["JobId"])] = fields["JobState"]
    return states


def _processes_of(job):
    """PIDs of the processes a job array's tasks run (found by ``SLURM_ARRAY_JOB_ID`` in their environment)."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if f"SLURM_ARRAY_JOB_ID={job}".encode() in environ:
            found[int(pid)] = (cmdline, next((e for e in environ if e.startswith(b"SLURM_ARRAY_TASK_ID=")), b""))
    return found


def _class(base, course_dir, n=STUDENTS):
    """``n`` submissions of 05_accumulation, cycling through the solution, the untouched release, a deleted
    test cell, a late one and the wrong-answer corpus (10 notebooks), in a plain folder ``collect`` takes."""
    students = synthetic_classes.normal_students(course_dir, ASSIGNMENT)
    assert n >= len(students), f"{n} submissions leave out some of the {len(students)} kinds"
    folder = base / "export"
    for k in range(n):
        student = students[k % len(students)]
        path = folder / f"s{k:02d}-{student.id}" / f"{ASSIGNMENT}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(student.nb, path)
    return folder


@pytest.mark.slow
def test_a_class_graded_on_slurm_with_a_failed_task_resubmitted_equals_a_plain_grade(cluster, tmp_path):
    env, base = cluster["env"], tmp_path
    times = {}
    start = time.perf_counter()
    course_dir = synthetic_classes.course_copy(base, [ASSIGNMENT])
    autograder(course_dir, "release", ASSIGNMENT, "--no-zip", "--dest", base / "student")
    autograder(course_dir, "collect", _class(base, course_dir), "--assignment", ASSIGNMENT,
               "--timestamp", "2030-01-14T12:00")
    plain = base / "plain"
    shutil.copytree(course_dir, plain)
    times["setup_s"] = time.perf_counter() - start

    dry = autograder(course_dir, "slurm", ASSIGNMENT, "--tasks", TASKS, "--cpus-per-task", 1, "--dry-run", env=env)
    assert f"#SBATCH --array=1-{TASKS}" in dry.stdout and "--dependency=afterok:" in dry.stdout
    assert not (course_dir / "grading" / "slurm").exists() and not _run(["squeue", "-h"], env).strip()
    start = time.perf_counter()
    submitted = autograder(course_dir, "slurm", ASSIGNMENT, "--tasks", TASKS, "--cpus-per-task", 1, env=env).stdout
    jobs = json.loads((course_dir / "grading" / "slurm" / "jobs.json").read_text())
    assert f"squeue -j {jobs['array']},{jobs['merge']}" in submitted and "sacct -j" in submitted

    # kill task 2's grader halfway: after 2 of its 4 submissions
    shard2 = course_dir / "grading" / "shards" / f"2-of-{TASKS}"
    half = STUDENTS // TASKS // 2
    _wait(lambda: len(list(shard2.glob("*/*.json"))) >= half, 600, "task 2 to grade half its submissions",
          cluster["base"])
    graders = [pid for pid, (cmdline, task) in _processes_of(jobs["array"]).items()
               if task == b"SLURM_ARRAY_TASK_ID=2" and f"--shard\x002/{TASKS}".encode() in cmdline]
    assert len(graders) == 1, _processes_of(jobs["array"])
    os.kill(graders[0], 9)
    _wait(lambda: not _run(["squeue", "-h"], env).strip(), 600, "the array to end and the merge job to go",
          cluster["base"])
    assert _task_states(jobs["array"], env) == {"1": "COMPLETED", "2": "FAILED", "3": "COMPLETED"}
    assert _task_states(jobs["merge"], env) == {jobs["merge"]: "CANCELLED"}, "afterok: no merge after a failed task"
    assert not _processes_of(jobs["array"]), "the killed grader's workers and kernels are gone"
    assert len(list(shard2.glob("*/*.json"))) < STUDENTS // TASKS and not (shard2 / "COMPLETE").exists()

    # merge names the shard and the command that runs it again; the gradebook is untouched
    report = autograder(course_dir, "merge", check=False)
    assert report.returncode == 1 and f"shard(s) 2 of {TASKS} did not finish" in report.stdout, report.stdout
    assert gradebook.dump(Course(course_dir).db_url, "chibigrad")["submissions"] == {}
    lines = report.stdout.split("run them again on Slurm, then merge when they succeed:\n")[1].splitlines()[:2]
    assert "--array=2 " in lines[0], lines
    subprocess.run(["bash", "-euc", "\n".join(lines)], env=env, check=True, capture_output=True)
    _wait(lambda: not _run(["squeue", "-h"], env).strip(), 600, "the resubmitted task and the merge", cluster["base"])
    times["slurm_s"] = time.perf_counter() - start
    merged = [p.read_text() for p in (course_dir / "grading" / "slurm" / "logs").glob("merge-*.out")]
    assert len(merged) == 1 and f"merged {STUDENTS} submission(s)" in merged[0], merged
    # the judge's student lib is a cache shared by tasks (keyed by its content), not a task's scratch
    left = [p for p in (cluster["base"] / "node-local").iterdir() if not p.name.startswith("chibigrad-student-lib-")]
    assert not left, "every task's scratch is removed, the killed one's too"

    start = time.perf_counter()
    autograder(plain, "grade", ASSIGNMENT, "--workers", 2)
    times["plain_grade_s"] = time.perf_counter() - start
    ours, theirs = (gradebook.dump(Course(d).db_url, "chibigrad") for d in (course_dir, plain))
    assert len(ours["submissions"]) == STUDENTS and ours == theirs
    tables = []
    for d in (course_dir, plain):
        autograder(d, "export")
        with open(d / "reports" / "grades.csv", newline="") as f:
            tables.append(list(csv.DictReader(f)))
    assert len(tables[0]) == STUDENTS + 1 and tables[0] == tables[1]
    top, scores = tables[0][0][ASSIGNMENT], {row["student_id"]: row[ASSIGNMENT] for row in tables[0][1:]}
    assert {scores[s] for s in scores if s.endswith("-solutions")} == {top} and float(top) > 0
    assert {scores[s] for s in scores if s.endswith("-untouched")} == {"0"}
    assert "nothing to grade" in autograder(course_dir, "grade").stdout
    out = build.ROOT / "_build" / "autograder"
    out.mkdir(parents=True, exist_ok=True)
    (out / "slurm_test_times.json").write_text(json.dumps(times, indent=1) + "\n")
