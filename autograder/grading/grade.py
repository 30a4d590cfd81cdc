"""``grade`` and ``merge``: autograde a class with N workers, or a shard of it, and merge results.

How the gradebook stays what serial ``nbgrader autograde`` would make: each submission is
graded by real nbgrader ``Autograde`` in a worker against a scratch gradebook holding exactly
what autograde reads (``autograder.grading.gradebook``); autograde's writes for one submission touch
only that submission's rows, so grading submissions in any order, in parallel or on other
machines, and writing those rows back one submission at a time (in this process, the only
writer) gives the same gradebook as grading them one after another. ``tests/test_autograder.py``
checks it against ``nbgrader autograde`` itself.

Re-running is idempotent: a submission is graded again only if its files changed since it was
last graded (or with ``--force``), and manual grades and comments are never written.
"""
import base64
import datetime
import hashlib
import json
import os
import queue
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

from .. import build
from . import gradebook

IGNORE = (".ipynb_checkpoints", "__pycache__", ".DS_Store")


# ---- what to grade ------------------------------------------------------------------------------------------------

def submission_files(directory):
    """``{relative path: bytes}`` of a submission folder."""
    out = {}
    for path in sorted(Path(directory).rglob("*")):
        if path.is_file() and not any(part in IGNORE for part in path.parts):
            out[str(path.relative_to(directory))] = path.read_bytes()
    return out


def digest(files):
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return h.hexdigest()


def plan(course, assignment=None, students=None, force=False, shard=None):
    """The submissions to grade, in a fixed order: ``[(assignment, student)]``. Pending means
    never graded, its last grading failed, or its files changed since (or ``force``).
    ``shard=(i, n)`` keeps every n-th."""
    released = course.assignments()
    if assignment and assignment not in released:
        raise SystemExit(f"unknown assignment {assignment!r}; released: {', '.join(released) or 'none'}")
    pairs = []
    for name in ([assignment] if assignment else released):
        if not course.submitted.is_dir():
            break
        for student_dir in sorted(course.submitted.iterdir()):
            if not (student_dir / name).is_dir() or (students and student_dir.name not in students):
                continue
            if not force:
                record = course.read_record(name, student_dir.name)
                graded = (course.autograded / student_dir.name / name).is_dir()
                if record and graded and record.get("status") != "error" and record.get("submission_sha256") == digest(
                        submission_files(student_dir / name)):
                    continue
            pairs.append((name, student_dir.name))
    if shard:
        index, count = shard
        pairs = pairs[index - 1::count]
    return pairs


def _source_files(course, assignment):
    directory = course.source / assignment
    return {k: v for k, v in submission_files(directory).items() if not k.endswith(".ipynb")} if directory.is_dir() else {}


def make_jobs(course, pairs):
    """The messages the workers get, and the submission files read now (restored from these if
    anything changes them while grading)."""
    notebooks = course.assignments()
    rows = gradebook.read_submission_rows(course.db_url, pairs)
    sources, jobs, originals = {}, [], {}
    for number, (assignment, student) in enumerate(pairs):
        files = submission_files(course.submitted / student / assignment)
        originals[(assignment, student)] = files
        if assignment not in sources:
            sources[assignment] = {k: _b64(v) for k, v in _source_files(course, assignment).items()}
        jobs.append({"id": number, "assignment": assignment, "student": student, "notebooks": notebooks[assignment],
                     "files": {k: _b64(v) for k, v in files.items()}, "source_files": sources[assignment],
                     "rows": rows[(assignment, student)], "submission_sha256": digest(files)})
    return jobs, originals


def _b64(data):
    return base64.b64encode(data).decode()


# ---- the workers --------------------------------------------------------------------------------------------------

class Pool:
    """N worker processes (``autograder.grading.worker``), each fed one job at a time by a thread here.
    A worker that dies is replaced and its job tried once more; a job that kills two workers is
    reported as failed (its gradebook rows are left as they were)."""

    def __init__(self, course, workers, settings, scratch, log):
        self.course, self.count, self.settings, self.scratch, self.log = course, workers, settings, scratch, log
        self.structure = gradebook.read_structure(course.db_url)
        self.deny = [str(course.root), str(scratch)]
        self.landlock_abi = None

    def _start(self, slot):
        env = build.nbgrader_env()
        process = subprocess.Popen([sys.executable, "-P", "-m", "autograder.grading.worker"], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=self.log, env=env, cwd=str(self.scratch))
        init = {"init": {"scratch": str(self.scratch / f"w{slot}"), "course": str(self.course.root),
                         "course_id": self.course.course_id, "structure": self.structure, "deny": self.deny,
                         "settings": self.settings}}
        process.stdin.write(json.dumps(init).encode() + b"\n")
        process.stdin.flush()
        ready = process.stdout.readline()
        if not ready:
            raise RuntimeError(f"a grading worker failed to start; see {self.log.name}")
        self.landlock_abi = json.loads(ready).get("landlock_abi")
        return process

    def run(self, jobs, on_result):
        """Grade ``jobs``; ``on_result(job, reply)`` is called here, in this thread, as each finishes."""
        todo, done = queue.Queue(), queue.Queue()
        for job in jobs:
            todo.put(job)

        def serve(slot):
            process = None
            while True:
                try:
                    job = todo.get_nowait()
                except queue.Empty:
                    break
                reply, problem = None, "the grading worker died twice on this submission"
                for attempt in range(2):
                    try:
                        if process is None or process.poll() is not None:
                            process = self._start(slot)
                        process.stdin.write(json.dumps(job).encode() + b"\n")
                        process.stdin.flush()
                        line = process.stdout.readline()
                    except (BrokenPipeError, OSError):
                        line = b""
                    except RuntimeError as err:  # the worker could not start: not this submission's fault
                        line, problem = b"", str(err)
                    if line:
                        reply = json.loads(line)
                        break
                    if process is not None:
                        _stop(process)
                    process = None
                if reply is None:
                    reply = {"id": job["id"], "assignment": job["assignment"], "student": job["student"],
                             "result": None, "files": {}, "notes": [], "cells": {}, "timings": {}, "error": problem}
                done.put((job, reply))
            if process is not None:
                _stop(process)

        threads = [threading.Thread(target=serve, args=(slot,), daemon=True) for slot in range(self.count)]
        for thread in threads:
            thread.start()
        for _ in range(len(jobs)):
            job, reply = done.get()
            on_result(job, reply)
        for thread in threads:
            thread.join()


def _stop(process):
    try:
        process.stdin.close()
    except OSError:
        pass
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# ---- writing results ----------------------------------------------------------------------------------------------

class PrivateGradebook:
    """The SQLite gradebook a run writes: a private copy, published over the course's after each reply.

    Student code runs while replies are written, and without Landlock it can reach the course's file.
    Had the grader merged into that file, a write landing between its reads and its commit would be read
    back (as a hand grade) and kept. Here nothing is ever read back from the course's file: the copy,
    taken before any student code ran and kept where no kernel works, is merged into, and each publish
    replaces the course's file whole, reporting it if it had changed since the last one."""

    SIDE_FILES = ("-journal", "-wal", "-shm")  # SQLite would replay these into the published file

    def __init__(self, path):
        self.path = path
        self.events = []
        self.folder = Path(tempfile.mkdtemp(prefix="autograder-gradebook-"))
        self.copy = self.folder / path.name
        self.mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
        if path.exists():
            _backup(path, self.copy)
        self.url = f"sqlite:///{self.copy}"
        self.seen = self._stat()

    def _stat(self):
        found = []
        for name in ("", *self.SIDE_FILES):
            try:
                st = self.path.with_name(self.path.name + name).stat()
                found.append((name, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
            except FileNotFoundError:
                pass
        return found

    def publish(self):
        """Replace the course's gradebook with the copy (or remove one the copy never had)."""
        if self._stat() != self.seen:
            self.events.append(f"{self.path.name} was changed by another program while grading ran; restored "
                               "the autograder's last version")
        for name in self.SIDE_FILES:
            self.path.with_name(self.path.name + name).unlink(missing_ok=True)
        if self.copy.exists():
            handle, staging = tempfile.mkstemp(prefix=f".{self.path.name}-", dir=self.path.parent)  # a new file
            os.close(handle)
            os.chmod(staging, self.mode)
            _backup(self.copy, staging)
            os.replace(staging, self.path)
        else:
            self.path.unlink(missing_ok=True)
        self.seen = self._stat()

    def check(self):
        """Publish again if anything else changed the course's gradebook; True if it had."""
        changed = self._stat() != self.seen
        if changed:
            self.publish()
        return changed

    def discard(self):
        shutil.rmtree(self.folder, ignore_errors=True)


def _backup(source, target):
    """Copy an SQLite database through SQLite (consistent even while another connection has it open)."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


class Results:
    """Where replies go: into the course (gradebook, ``autograded/``, grading records) or, for a
    shard, into a result folder that ``merge`` reads later."""

    def __init__(self, course, shard_dir=None):
        self.course, self.shard_dir = course, shard_dir
        self.guard = PrivateGradebook(course.sqlite_path) if (course.sqlite_path and not shard_dir) else None
        self._gb = None

    def add(self, job, reply):
        reply = dict(reply, submission_sha256=job["submission_sha256"],
                     graded_at=datetime.datetime.now(datetime.timezone.utc).isoformat())
        if self.shard_dir is not None:
            path = self.shard_dir / reply["assignment"] / f"{reply['student']}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(reply))
            os.replace(tmp, path)
            return record_of(reply)
        return self.apply(reply)

    def apply(self, reply):
        """Write one reply into the course; returns its grading record."""
        course, record = self.course, record_of(reply)
        if reply["result"] is not None:
            gb = self._gradebook()
            with warnings.catch_warnings():  # nbgrader's add_submission trips SQLAlchemy 2's autoflush warnings
                warnings.simplefilter("ignore")
                gradebook.merge_result(gb, reply["assignment"], reply["student"], reply["result"])
            if self.guard:
                self.guard.publish()
            _replace_dir(course.autograded / reply["student"] / reply["assignment"], reply["files"])
        course.write_record(record)
        return record

    def _gradebook(self):
        if self._gb is None:
            from nbgrader.api import Gradebook
            self._gb = Gradebook(self.guard.url if self.guard else self.course.db_url, self.course.course_id)
        return self._gb

    def close(self):
        """Close the gradebook; with no student code running any more, publish it again if it was changed."""
        if self._gb is not None:
            self._gb.close()
            self._gb = None
        if self.guard:
            self.guard.check()
            self.guard.discard()


def record_of(reply):
    """The grading record kept per submission (``grading/records/<assignment>/<student>.json``)."""
    result = reply.get("result") or {"notebooks": {}}
    score = sum((g["auto_score"] or 0) for nb in result["notebooks"].values() for g in nb["grades"].values())
    top = sum(g["max_score"] for nb in result["notebooks"].values() for g in nb["grades"].values())
    status = "error" if reply.get("result") is None else ("missing" if not reply.get("valid_notebooks") else "graded")
    not_graded = sorted(name for nb in result["notebooks"].values() for name, g in nb["grades"].items()
                        if g["auto_score"] is None and g["needs_manual_grade"] and g["manual_score_seen"] is None)
    return {"assignment": reply["assignment"], "student": reply["student"], "status": status,
            "auto_score": score, "max_score": top, "not_graded": not_graded, "timestamp": result.get("timestamp"),
            "submission_sha256": reply.get("submission_sha256"), "graded_at": reply.get("graded_at"),
            "notes": reply.get("notes", []), "error": reply.get("error"), "cells": reply.get("cells", {}),
            "timings": reply.get("timings", {}),
            "sandbox": reply.get("sandbox", {})}


def _replace_dir(target, files):
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".incoming-", dir=target.parent))
    for rel, data in files.items():
        path = staging / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        path.chmod(0o444)  # as nbgrader leaves autograded files
    if target.exists():
        old = target.with_name(f".old-{target.name}-{os.getpid()}")
        os.replace(target, old)
        os.replace(staging, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(staging, target)


# ---- progress ----------------------------------------------------------------------------------------------------

class Progress:
    """A progress bar on a terminal, one line per submission otherwise."""

    def __init__(self, total, stream=sys.stderr):
        self.total, self.done, self.start, self.stream = total, 0, time.monotonic(), stream
        self.tty = stream.isatty()

    def update(self, record):
        self.done += 1
        elapsed = time.monotonic() - self.start
        left = elapsed / self.done * (self.total - self.done)
        what = (f"{record['student']}/{record['assignment']}: {record['auto_score']:g}/{record['max_score']:g}"
                + (f" ({record['status']})" if record["status"] != "graded" else "")
                + (f", {len(record['notes'])} note(s)" if record["notes"] else ""))
        if self.tty:
            width = 30
            filled = int(width * self.done / max(self.total, 1))
            self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                              f"{_clock(elapsed)} elapsed, ~{_clock(left)} left  {what[:60]:<60}")
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(f"[{self.done}/{self.total}] {what}\n")
        self.stream.flush()


def _clock(seconds):
    seconds = int(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}"


# ---- the commands -------------------------------------------------------------------------------------------------

class CourseLock:
    """One ``grade`` or ``merge`` at a time writes a course (``grading/lock``)."""

    def __init__(self, course):
        course.grading.mkdir(parents=True, exist_ok=True)
        self.path = course.grading / "lock"

    def __enter__(self):
        import fcntl
        self.file = open(self.path, "w")
        try:
            fcntl.flock(self.file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.file.close()
            raise SystemExit(f"another `autograder grade` or `merge` is running on this course ({self.path})") from None
        return self

    def __exit__(self, *exc):
        self.file.close()


def grade(course, assignment=None, workers=2, shard=None, force=False, students=None, settings=None,
          scratch=None, quiet=False):
    """Grade what is pending; returns ``(records, summary)``. Shards do not write the course, so
    they run side by side; a plain ``grade`` holds the course's lock."""
    if shard:
        return _grade(course, assignment, workers, shard, force, students, settings, scratch, quiet)
    with CourseLock(course):
        return _grade(course, assignment, workers, shard, force, students, settings, scratch, quiet)


def _grade(course, assignment, workers, shard, force, students, settings, scratch, quiet):
    settings = dict(default_settings(course), **(settings or {}))
    pairs = plan(course, assignment, students, force, shard)
    course.logs.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    log_path = course.logs / (f"grade-{stamp}" + (f"-shard{shard[0]}of{shard[1]}" if shard else "") + ".log")
    summary = {"submissions": len(pairs), "workers": workers, "log": str(log_path), "guard": []}
    shard_dir = course.shards / f"{shard[0]}-of-{shard[1]}" if shard else None
    if not pairs:
        if shard_dir is not None:  # an empty slice is a finished shard too, or `merge` would wait for it
            shard_dir.mkdir(parents=True, exist_ok=True)
            (shard_dir / "COMPLETE").write_text(json.dumps({"submissions": 0, "summary": summary}) + "\n")
        return [], summary
    jobs, originals = make_jobs(course, pairs)
    scratch_root = Path(tempfile.mkdtemp(prefix="autograder-", dir=scratch))
    results, records = Results(course, shard_dir), []
    progress = None if quiet else Progress(len(jobs))
    start = time.monotonic()
    try:
        with open(log_path, "ab") as log:
            pool = Pool(course, max(1, min(workers, len(jobs))), settings, scratch_root, log)

            def on_result(job, reply):
                record = results.add(job, reply)
                records.append(record)
                if progress:
                    progress.update(record)

            pool.run(jobs, on_result)
            summary["landlock_abi"] = pool.landlock_abi
    finally:
        results.close()
        shutil.rmtree(scratch_root, ignore_errors=True)
    summary["wall_s"] = time.monotonic() - start
    summary["guard"] = (results.guard.events if results.guard else []) + _check_inputs(course, originals)
    if shard_dir is not None:
        (shard_dir / "COMPLETE").write_text(json.dumps({"submissions": len(pairs), "summary": summary}) + "\n")
    return records, summary


def default_settings(course):
    return {"cell_timeout": None, "notebook_timeout": max(600, 10 * course.cell_timeout), "memory_mb": 2048,
            "file_mb": 256, "max_processes": 64, "landlock": True}


def _check_inputs(course, originals):
    """Submission files changed while grading ran are put back (from the copies read at the start)."""
    events = []
    for (assignment, student), files in originals.items():
        directory = course.submitted / student / assignment
        if submission_files(directory) != files:
            for rel, data in files.items():
                (directory / rel).parent.mkdir(parents=True, exist_ok=True)
                (directory / rel).write_bytes(data)
            events.append(f"submitted/{student}/{assignment} changed while grading ran; restored")
    return events


class UnfinishedShards(Exception):
    """Shards that did not finish (``missing``: ``{N: [I, ...]}``): ``merge`` merges nothing until they
    did, since grading them later slices what is still pending, which merging the others changes."""

    def __init__(self, missing):
        super().__init__(", ".join(f"{', '.join(map(str, found))} of {count}" for count, found in missing.items()))
        self.missing = missing


def merge(course, paths=None, allow_missing=False):
    """Merge shard results (default: every shard folder under ``grading/shards``). A result older
    than the submission's current grading record is skipped. Merged folders move to
    ``grading/shards/merged/``. Returns ``(records, skipped)``. Raises ``UnfinishedShards`` if
    some of an I-of-N split have no finished folder (unless ``allow_missing``: what they had
    graded is merged, the rest stays pending for a plain ``grade``)."""
    with CourseLock(course):
        return _merge(course, paths, allow_missing)


def unfinished_shards(folders):
    """``{N: [I, ...]}``: for every N that the folders ``I-of-N`` split into, the I without a ``COMPLETE`` one."""
    finished, counts = set(), set()
    for folder in folders:
        if name := re.fullmatch(r"(\d+)-of-(\d+)", folder.name):
            counts.add(int(name[2]))
            if (folder / "COMPLETE").is_file():
                finished.add((int(name[1]), int(name[2])))
    return {n: missing for n in sorted(counts) if (missing := [i for i in range(1, n + 1) if (i, n) not in finished])}


def _merge(course, paths, allow_missing=False):
    folders = [Path(p) for p in paths] if paths else sorted(
        p for p in course.shards.glob("*-of-*") if p.is_dir())
    missing = unfinished_shards(folders)
    if missing and not allow_missing:
        raise UnfinishedShards(missing)
    results, records, skipped = Results(course), [], []
    try:
        for folder in folders:
            for path in sorted(folder.glob("*/*.json")):
                reply = json.loads(path.read_text())
                current = course.read_record(reply["assignment"], reply["student"])
                if current and current.get("graded_at", "") > reply.get("graded_at", ""):
                    skipped.append(f"{reply['student']}/{reply['assignment']}: graded again since")
                    continue
                records.append(results.apply(reply))
    finally:
        results.close()
    done = course.shards / "merged" / datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    for folder in folders:
        if folder.parent == course.shards:
            done.mkdir(parents=True, exist_ok=True)
            os.replace(folder, done / folder.name)
    return records, skipped
