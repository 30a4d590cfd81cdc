"""A grading worker: a long-lived process that autogrades one submission at a time.

The parent (``autograder.grading.grade``) starts N of these (``python -m autograder.grading.worker``) and
talks to each over its stdin and stdout, one JSON line per message. For each job the worker
builds a scratch course of its own: a gradebook holding the assignments and this one
submission's existing rows, ``submitted/<student>/<assignment>/`` with the files the parent
sent, and the assignment's non-notebook source files. It runs nbgrader's ``Autograde`` on that
in-process with ``autograder.grading.execute``'s preprocessors, and sends back what autograde wrote for
the submission, the autograded files and what happened. Everything the worker touches is in
its scratch folder; the real course and gradebook are the parent's.
"""
import base64
import json
import logging
import os
import re
import shutil
import stat
import subprocess
import sys
import time
import traceback
import warnings
from pathlib import Path

from . import execute, gradebook, judge, sandbox, scoring

KERNEL_NAME = "autograder-sandbox"
# what a kernel may read besides its Python, the staged packages and its own folders
# (not /proc, /sys or the rest of /dev: a root kernel could read the disk, the kernel's memory or other processes)
SYSTEM_DIRS = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc",
               "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
# the machine's secrets inside those (a kernel started by root could read them)
SYSTEM_SECRETS = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssh", "/etc/ssl/private",
                  "/etc/sudoers", "/etc/sudoers.d")
# what of autograder/ a kernel imports (the launcher): add a module here if it does
KERNEL_MODULES = ("__init__.py", "grading/__init__.py", "grading/sandbox.py")
AUTOGRADER = Path(__file__).resolve().parent.parent  # the package's folder
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")


class Worker:
    def __init__(self, init):
        self.scratch = Path(init["scratch"])
        self.settings = init["settings"]
        self.course_id = init["course_id"]
        self.config_dir = init["course"]
        self.scratch.mkdir(parents=True, exist_ok=True)
        self.template = self.scratch / "template.db"
        gradebook.write_scratch(self.template, init["structure"])
        self.release = scoring.release_metadata(init["structure"])
        self.runtime = self.scratch / "runtime"
        self.runtime.mkdir(exist_ok=True)
        self._write_kernel_spec()
        for name in THREAD_VARS:
            os.environ[name] = "1"
        os.environ["JUPYTER_RUNTIME_DIR"] = str(self.runtime)
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
        self.lib = _stage_packages(self.scratch / "lib")
        self.student_lib = _stage_student_lib(self.scratch / "student-lib")
        os.environ["PYTHONPATH"] = str(self.lib)  # kernels import chibigrad from here
        self.deny = list(init["deny"])
        self.drop_capabilities = _runs_without_capabilities(self.lib)
        self.landlock = sandbox.landlock_abi() if self.settings.get("landlock", True) else 0
        self._config = None

    def _write_kernel_spec(self):
        spec_dir = self.scratch / "jupyter" / "kernels" / KERNEL_NAME
        spec_dir.mkdir(parents=True, exist_ok=True)
        (spec_dir / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-P", "-m", "autograder.grading.sandbox", "kernel", "-f", "{connection_file}",
                     "--HistoryManager.hist_file=:memory:"],
            "display_name": "Python 3 (autograder sandbox)", "language": "python"}))
        os.environ["JUPYTER_PATH"] = os.pathsep.join(
            [str(self.scratch / "jupyter"), os.environ.get("JUPYTER_PATH", ""), str(Path(sys.prefix) / "share" / "jupyter")])

    def nbgrader_config(self, root, assignment, student):
        from nbconvert.preprocessors import ClearMetadataPreprocessor
        from nbgrader.preprocessors import AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput
        from traitlets.config import Config
        from traitlets.config.loader import PyFileConfigLoader
        if self._config is None:
            self._config = PyFileConfigLoader("nbgrader_config.py", path=self.config_dir).load_config()
        cfg = Config()
        cfg.merge(self._config)
        cfg.CourseDirectory.root = str(root)
        cfg.CourseDirectory.db_url = f"sqlite:///{root / 'gradebook.db'}"
        cfg.CourseDirectory.assignment_id = assignment
        cfg.CourseDirectory.student_id = student
        cfg.CourseDirectory.course_id = self.course_id
        cfg.Autograde.autograde_preprocessors = [
            execute.SandboxedExecute, scoring.TestCellOutputs, execute.AfterStudentCode, IgnorePattern,
            ClearMetadataPreprocessor, LimitOutput, judge.JudgedSaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
        cfg.Execute.kernel_name = KERNEL_NAME
        if self.settings.get("cell_timeout"):
            seconds = int(self.settings["cell_timeout"])
            cfg.Execute.timeout = seconds
            message = cfg.Execute.get("error_on_timeout")
            if message:  # the course's message names its own timeout
                cfg.Execute.error_on_timeout = dict(message, traceback=[
                    re.sub(r"\b\d+ seconds\b", f"{seconds} seconds", line) for line in message["traceback"]])
        return cfg

    # ---- one job ----------------------------------------------------------------------------------------------------

    def grade(self, job):
        begin = time.monotonic()
        assignment, student = job["assignment"], job["student"]
        root = self.scratch / "job"
        if root.exists():
            _rmtree(root)
        for sub in ("tmp/ipython", "tmp/mpl", "private"):
            (root / sub).mkdir(parents=True)
        shutil.copyfile(self.template, root / "gradebook.db")
        db_url = f"sqlite:///{root / 'gradebook.db'}"
        gradebook.write_rows(db_url, job["rows"])
        submitted = root / "submitted" / student / assignment
        _write_files(submitted, job["files"])
        _write_files(root / "source" / assignment, job.get("source_files", {}))
        notebook_dir = root / "autograded" / student / assignment
        judged = judge.judged(assignment)
        context = execute.JobContext(self._policy(root, notebook_dir, judged), self.settings["notebook_timeout"],
                                     self.settings["max_processes"])
        context.judged, context.kernel_lib = judged, (self.student_lib if judged else self.lib)
        context.before_student_code = lambda: self._protect(root, context)
        context.after_student_code = lambda: self._restore(root, context)
        valid = self._check_notebooks(submitted, job["notebooks"], context)
        self._normalise(submitted, assignment, valid, context)
        tmp = root / "tmp"
        os.environ.update({sandbox.POLICY_ENV: json.dumps(context.policy), "TMPDIR": str(tmp),
                           "IPYTHONDIR": str(tmp / "ipython"), "MPLCONFIGDIR": str(tmp / "mpl"),
                           "XDG_CACHE_HOME": str(tmp)})
        error = None
        execute.CURRENT["job"] = context
        try:
            if valid:
                error = self._autograde(root, assignment, student)
            else:
                self._grade_as_missing(db_url, assignment, student, submitted)
        except Exception:
            error = traceback.format_exc()
        finally:
            execute.CURRENT["job"] = None
            sandbox.kill_descendants()
            sandbox.reap_orphans()
        self._read_events(root, context)
        # a submission nbgrader could not grade is not merged: its grades in the gradebook stay as they were
        result = None if error else gradebook.submission_result(db_url, assignment, student, self.course_id)
        keep = {f"{name}.ipynb" for name in job["notebooks"]} | set(job.get("source_files", {})) | {"timestamp.txt"}
        files = _autograded_files(notebook_dir, context, keep) if notebook_dir.is_dir() else {}
        context.timings["job_s"] = time.monotonic() - begin
        return {"id": job["id"], "assignment": assignment, "student": student, "result": result, "files": files,
                "notes": context.notes, "cells": context.cells,
                "timings": {k: round(v, 3) for k, v in context.timings.items()}, "error": error,
                "valid_notebooks": valid, "sandbox": {"landlock_abi": self.landlock, "memory_mb": self.settings["memory_mb"],
                                                      "seccomp": bool(sandbox.seccomp_supported()),
                                                      "capabilities_dropped": self.drop_capabilities}}

    def _policy(self, root, notebook_dir, judged=False):
        """A judged assignment's kernel reads the student lib (the student edition, the runner); the others'
        (an assignment with no exercises module: visible tests only) read the full lib."""
        tmp = root / "tmp"
        write = [str(notebook_dir), str(tmp)]
        files = file_policy(self.student_lib if judged else self.lib, write, self.deny, bool(self.landlock))
        if judged:
            files["grader_modules"] = judge.STUDENT_MODULES
        return {"memory_bytes": self.settings["memory_mb"] << 20, "file_bytes": self.settings["file_mb"] << 20,
                "processes": self.settings["max_processes"] + 32, "landlock": bool(self.landlock),
                **files, "seccomp": True,
                "drop_capabilities": self.drop_capabilities, "home": str(tmp),
                "events": str(root / "private" / "events.jsonl"), "log": str(root / "private" / "kernel.log")}

    def _check_notebooks(self, submitted, expected, context):
        """Which expected notebooks can be graded. A malformed one is removed from the scratch copy
        (nbgrader then scores it 0, as a missing notebook); a lone notebook with another name is
        graded under the expected name."""
        import nbformat
        present = sorted(p.name for p in submitted.glob("*.ipynb"))
        wanted = [f"{name}.ipynb" for name in expected]
        if len(wanted) == 1 and wanted[0] not in present and len(present) == 1:
            (submitted / present[0]).rename(submitted / wanted[0])
            context.note(f"notebook {present[0]!r} graded as {wanted[0]!r}")
            present = wanted
        valid = []
        for name in wanted:
            path = submitted / name
            if name not in present:
                context.note(f"{name}: missing, scored 0")
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    nb = nbformat.read(path, as_version=4)
                    nbformat.validate(nb)
            except Exception as err:
                context.note(f"{name}: not a valid notebook ({type(err).__name__}: {str(err)[:200]}), scored 0")
                path.unlink()
                continue
            valid.append(name)
        return valid

    def _normalise(self, submitted, assignment, valid, context):
        """The release's nbgrader metadata on every cell, before nbgrader reads it (``scoring.normalise``);
        only the scratch copy changes."""
        import nbformat
        for name in valid:
            release = self.release.get((assignment, name[:-len(".ipynb")]))
            if not release:
                continue
            path = submitted / name
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    nb = nbformat.read(path, as_version=4)
                    changes = scoring.normalise(nb, release)
                    if changes:
                        nbformat.write(nb, path)
            except Exception as err:  # grade it as nbgrader would rather than not at all
                changes = [f"{name}: could not be normalised ({type(err).__name__}: {str(err)[:200]})"]
            for change in changes:
                context.note(change)

    def _autograde(self, root, assignment, student):
        from nbgrader.converters import Autograde
        from nbgrader.coursedir import CourseDirectory
        cfg = self.nbgrader_config(root, assignment, student)
        coursedir = CourseDirectory(config=cfg)
        app = Autograde(coursedir=coursedir, config=cfg)
        app.force = True
        app.create_student = True
        errors = _ErrorLog()
        app.log.addHandler(errors)
        try:
            app.start()
        except Exception as err:  # nbgrader reports its own failures this way, after logging them
            causes = [m.strip().splitlines()[-1] for m in errors.messages if "Traceback" in m]
            return "; ".join(causes) or f"{type(err).__name__}: {err}"
        finally:
            app.log.removeHandler(errors)
        return None

    def _grade_as_missing(self, db_url, assignment, student, submitted):
        """No notebook to run: what nbgrader does for a missing notebook (score 0, no manual grading needed)."""
        from nbgrader.api import Gradebook
        from nbgrader.utils import parse_utc
        stamp = submitted / "timestamp.txt"
        timestamp = stamp.read_text().strip() if stamp.is_file() else ""
        with Gradebook(db_url, self.course_id) as gb:
            gb.update_or_create_student(student)
            if timestamp:
                submission = gb.update_or_create_submission(assignment, student, timestamp=parse_utc(timestamp))
            else:
                submission = gb.update_or_create_submission(assignment, student)
            for nb in submission.notebooks:
                for grade in nb.grades:
                    grade.auto_score = 0
                    grade.needs_manual_grade = False
            gb.db.commit()

    # ---- what student code may have touched -------------------------------------------------------------------------

    def _protect(self, root, context):
        """Remember every file of the scratch course outside the notebook's own folder, contents and mode."""
        context.protected = {p: (p.read_bytes(), p.stat().st_mode & 0o7777) for p in _files_outside(root)}

    def _restore(self, root, context):
        """Put back whatever student code changed outside its folder, contents or modes (Landlock
        and seccomp normally forbid it), and leave only regular files and folders in the notebook's
        folder: nbgrader, unconfined, writes the graded notebook there next."""
        protected = getattr(context, "protected", {})
        now = set(_files_outside(root))
        changed = []
        for path, (data, mode) in protected.items():
            if path not in now or path.read_bytes() != data:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
                changed.append(path)
            if path.stat().st_mode & 0o7777 != mode:
                path.chmod(mode)
                changed.append(path)
        for path in now - set(protected):
            path.unlink()
            changed.append(path)
        removed = _only_plain_files(Path(context.policy["write"][0]))
        if removed:
            context.note("left links or special files in its folder; removed before nbgrader wrote there: "
                         + ", ".join(removed[:5]))
        if changed:
            names = ", ".join(sorted(str(p.relative_to(root)) for p in changed)[:5])
            context.note(f"changed files outside its folder in the grader's scratch copy ({names}); restored")

    def _read_events(self, root, context):
        path = root / "private" / "events.jsonl"
        if not path.is_file():
            return
        kinds = {}
        with open(path, "rb") as f:
            for line in f.read(1_000_000).splitlines():
                try:
                    kind, detail = json.loads(line)
                except (ValueError, TypeError):
                    continue
                kinds.setdefault(str(kind), []).append(str(detail))
        blocked = "blocked" if self.landlock else "not blocked: no Landlock here; checked afterwards"
        if "write-outside" in kinds:
            paths = sorted(set(kinds["write-outside"]))
            context.note(f"tried to write or delete outside its folder ({blocked}): {', '.join(paths[:4])}"
                         + (f" and {len(paths) - 4} more" if len(paths) > 4 else ""))
        if "mode-outside" in kinds:
            context.note("tried to change permissions or owners outside its folder: "
                         + "; ".join(self._mode_outcome(e) for e in sorted(set(kinds["mode-outside"]))[:10]))
        if "read-secret" in kinds:
            paths = sorted(set(kinds["read-secret"]))
            how = "blocked by Landlock" if self.landlock else "not blocked: no Landlock here"
            context.note(f"tried to read the course, the grader or the solutions outside its folder ({how}): "
                         + ", ".join(paths[:4]) + (f" and {len(paths) - 4} more" if len(paths) > 4 else ""))
        if "link-outside" in kinds:
            paths = sorted(set(kinds["link-outside"]))
            context.note("made symbolic links in its folder to files outside its folder (removed before nbgrader "
                         f"wrote there; nothing was written through them): {', '.join(paths[:4])}")
        if "shadow" in kinds:
            context.note("wrote files named like the grader's packages into its folder (to replace them on "
                         f"import): {', '.join(sorted(set(kinds['shadow']))[:4])}")
        if "database" in kinds:
            context.note(f"opened an SQLite database: {', '.join(sorted(set(kinds['database']))[:3])}")
        if "signal" in kinds:
            blocked = "those outside the sandbox blocked" if self.landlock >= 6 else "not blocked"
            context.note(f"sent signals to other processes ({blocked}): "
                         f"{', '.join(sorted(set(kinds['signal']))[:3])}")
        if "import" in kinds:
            names = sorted(set(kinds["import"]))
            context.note(f"imported outside its allowance (the grader's modules are not in the student process): "
                         + ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else ""))
        if "process" in kinds:
            context.note(f"started processes ({len(kinds['process'])} process-creating calls)")
        if "limit" in kinds:
            refused = "refused" if sandbox.seccomp_supported() else "not refused: no seccomp here"
            context.note(f"tried to change the sandbox's memory cap ({refused}): {'; '.join(kinds['limit'][:3])}")
        if "native" in kinds:
            context.note("called C functions through ctypes (their system calls pass by the grader's reports; the "
                         f"sandbox refuses what they try all the same): {', '.join(sorted(set(kinds['native'])))}")
        if "native-refused" in kinds:
            context.note("tried to load native code of its own (refused: its system calls would be out of the "
                         f"grader's sight): {', '.join(sorted(set(kinds['native-refused']))[:3])}")
        if "program-refused" in kinds:
            context.note("tried to run a program (refused: a graded notebook runs none, since a program's own memory "
                         f"is out of the grader's sight): {', '.join(sorted(set(kinds['program-refused'])))}")
        if "sealed" in kinds:
            context.note("tried to change the main stack, which the sandbox seals so that it cannot grow unwatched "
                         f"(refused): {', '.join(sorted(set(kinds['sealed'])))}")
        if "memory-refused" in kinds:
            refused = "; ".join(kinds["memory-refused"][:3])
            context.note("the grader stopped allocations past the kernel's memory cap (seen outside the kernel, "
                         f"whether or not the notebook caught the MemoryError): {refused}")

    def _mode_outcome(self, event):
        """``os.chmod 0o0 on /course/gradebook.db (blocked ...)``: what the sandbox let through."""
        if sandbox.seccomp_supported():
            return f"{event} (blocked: chmod and chown are refused in the sandbox)"
        return f"{event} (not blocked: no seccomp on this system)"


class _ErrorLog(logging.Handler):
    """nbgrader's error messages for one job (they also go to the worker's log)."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage()[-3000:])


def _only_plain_files(directory):
    """Remove symbolic links (nbgrader would write the graded notebook through one, wherever it
    points) and special files (a FIFO named like the notebook would hang it) under
    ``directory``; returns the names removed. Run when no student process is left."""
    removed = []
    for dirpath, dirnames, filenames in os.walk(directory):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode) or not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                os.unlink(path)
                removed.append(os.path.relpath(path, directory))
                if name in dirnames:
                    dirnames.remove(name)
    return removed


def _autograded_files(directory, context, keep, budget=20_000_000):
    """The files of the notebook's folder that go into ``autograded/`` (and so into feedback):
    the notebooks and the files the release shipped (``keep``), as regular files only (a
    symbolic link could point at anything this unconfined process can read), at most
    ``budget`` bytes in all. Whatever the kernel wrote there (a ``sitecustomize.py``, a
    ``.pth``, a package named like the grader's) stays behind."""
    files, used, dropped, left = {}, 0, [], []
    paths = sorted(directory.rglob("*"), key=lambda p: (p.suffix != ".ipynb", str(p)))
    for path in paths:
        rel = str(path.relative_to(directory))
        if path.is_dir() and not path.is_symlink():
            continue
        if rel not in keep:
            left.append(rel)
            continue
        if path.is_symlink() or any(parent.is_symlink() for parent in path.parents if directory in parent.parents):
            dropped.append(rel)
            continue
        if not path.is_file():
            continue
        size = path.stat().st_size
        if used + size > budget and path.suffix != ".ipynb":
            dropped.append(rel)
            continue
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            files[rel] = base64.b64encode(f.read()).decode()
        used += size
    if dropped:
        context.note(f"left files in its folder that were not kept (links, or over {budget >> 20} MB in all): "
                     + ", ".join(dropped[:5]))
    if left:
        context.note(f"wrote {len(left)} file(s) into its folder that were not kept in autograded/ (only the "
                     "notebook and the release's files are): " + ", ".join(sorted(left)[:5])
                     + (f" and {len(left) - 5} more" if len(left) > 5 else ""))
    return files


def file_policy(lib, write, deny, landlock=True):
    """What a kernel may read and write (``autograder.grading.sandbox``): it reads only the system's
    folders (less their secrets), the Python it runs on, the staged packages ``lib`` and its own
    ``write`` folders; not the course, the other jobs, the repository (solutions, history) or
    anyone's home. ``deny``: the folders that stay unreadable even inside those (the course, the scratch
    folder)."""
    deny = [*deny, *(p for p in SYSTEM_SECRETS if os.path.exists(p))]
    read = ([p for p in SYSTEM_DIRS if os.path.exists(p)]
            + sorted({sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}) + [str(lib)] + list(write))
    return {"write": list(write), "read": sandbox.rule_paths(read, deny) if landlock else [],
            "list": [str(Path(lib) / "autograder")], "secret": deny + [str(_repository())], "public": read}


def _runs_without_capabilities(lib):
    """Can a kernel start without capabilities? As root, not if its Python or packages are
    readable only thanks to CAP_DAC_OVERRIDE (a folder of another user); then kernels keep them
    (and the worker's log says so) rather than fail on every submission."""
    if os.getuid() != 0:
        return True
    code = ("from autograder.grading import sandbox; sandbox.drop_capabilities(); "
            "import ipykernel.kernelapp, numpy, chibigrad")
    try:
        result = subprocess.run([sys.executable, "-P", "-c", code], env=dict(os.environ, PYTHONPATH=str(lib)),
                                capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return False
    if result.returncode != 0:
        logging.warning("kernels keep root's capabilities: without them Python cannot start here: %s",
                        result.stderr.strip().splitlines()[-1:] or result.returncode)
    return result.returncode == 0


def _repository():
    """The folder the grader's packages come from (a checkout: its notebooks/ hold the solutions)."""
    return AUTOGRADER.parent


def _stage_packages(lib):
    """A copy of chibigrad and autograder that kernels import (``PYTHONPATH``), so a kernel needs
    nothing of the repository: not even a listing of its top folder, which names the solutions'
    folders (and, for a course inside it, the students)."""
    import compileall
    if lib.exists():
        _rmtree(lib)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.md")
    shutil.copytree(Path(__import__("chibigrad").__file__).resolve().parent, lib / "chibigrad", ignore=skip)
    for name in KERNEL_MODULES:  # not the rest of the grader: a kernel has no use for it
        (lib / "autograder" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(AUTOGRADER / name, lib / "autograder" / name)
    compileall.compile_dir(str(lib), quiet=1)  # kernels do not write bytecode: compile once here
    return lib


def _stage_student_lib(lib):
    """What a judged assignment's kernel imports: the student edition of chibigrad (answers stubbed), the
    runner's modules and the sandbox's launcher; no exercises, no judge."""
    import compileall
    if lib.exists():
        _rmtree(lib)
    shutil.copytree(judge.student_lib(), lib)
    shutil.copy2(AUTOGRADER / "grading" / "sandbox.py", lib / "autograder" / "grading" / "sandbox.py")
    compileall.compile_dir(str(lib), quiet=1)
    return lib


def _files_outside(root):
    skip = {root / "autograded", root / "tmp", root / "private"}
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if Path(dirpath, d) not in skip]
        out += [Path(dirpath, f) for f in filenames if not f.endswith("-journal")]
    return out


def _write_files(directory, files):
    directory.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        target = (directory / rel).resolve()
        if directory.resolve() not in target.parents:
            continue  # a name like ../x: not ours to write
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(base64.b64decode(data))


def _rmtree(path):
    def make_writable(func, target, _):
        os.chmod(target, 0o700)
        func(target)
    shutil.rmtree(path, onerror=make_writable)


def main():
    # the protocol gets its own descriptors; the standard ones go to the log, where kernels' stray output lands
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    sandbox.set_child_subreaper()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s [worker %(process)d] %(levelname)s %(message)s")
    worker = None
    for line in proto_in:
        message = json.loads(line)
        if "init" in message:
            worker = Worker(message["init"])
            reply = {"ready": True, "landlock_abi": worker.landlock}
        else:
            try:
                reply = worker.grade(message)
            except Exception:
                reply = {"id": message.get("id"), "assignment": message.get("assignment"),
                         "student": message.get("student"), "result": None, "files": {}, "notes": [],
                         "cells": {}, "timings": {}, "error": traceback.format_exc()}
        proto_out.write(json.dumps(reply).encode() + b"\n")
        proto_out.flush()


if __name__ == "__main__":
    main()
