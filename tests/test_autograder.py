"""The instructor's autograder (``autograder/``), end to end with real nbgrader.

The slow tests share one run (``term``): a copy of the course with 01_graphs and 02_backward is
released, a synthetic class (``tests/synthetic_classes.py``: the solutions, the wrong-answer corpus,
bad input and hostile code) is exported as a Canvas zip and a Moodle zip, collected, and graded
with 2 workers. Then: every score, exercise by exercise; what the report says about each hostile
submission; that nothing outside a submission's folder changed; that parallel grading leaves
the gradebook as serial ``nbgrader autograde`` does, and so do two shards merged; that a regrade
is idempotent and keeps manual grades; feedback without hidden tests; export, report, integrity.
"""
import csv
import errno
import hashlib
import html
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import pytest

import synthetic_classes
from autograder import build, feedback
from autograder.course import Course
from autograder.grading import gradebook, sandbox

ROOT = Path(__file__).resolve().parent.parent
JUDGE_CHECKS = ROOT / "autograder" / "grading" / "exercises"  # the hidden checks, in the judge's process
ASSIGNMENTS = ["01_graphs", "02_backward"]
# per-cell limit: the slowest honest cell takes ~2-4 s here, so a loaded CI machine stays far inside it
CELL_TIMEOUT = 30
# the students whose gradebook rows serial nbgrader, the sharded run and the parallel run must agree on
COMPARED = ["a01-solutions", "a01-untouched", "a01-wrong-0", "a01-late", "a01-deleted-test-cell", "a02-solutions",
            "a02-wrong-1"]


def autograder(course_dir, *args, check=True, timeout=1200):
    result = subprocess.run([sys.executable, "-m", "autograder", "--course", str(course_dir), *map(str, args)],
                            capture_output=True, text=True, timeout=timeout, env=build.nbgrader_env())
    if check and result.returncode != 0:
        raise AssertionError(f"autograder {' '.join(map(str, args))} failed:\n{result.stdout[-3000:]}\n"
                             f"{result.stderr[-5000:]}")
    return result


# ---- fast tests ----------------------------------------------------------------------------------------------------

def test_command_line_lists_the_commands():
    result = subprocess.run([sys.executable, "-m", "autograder", "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    for command in ("release", "collect", "grade", "merge", "slurm", "feedback", "export", "report", "integrity"):
        assert command in result.stdout
    assert "--shard" in subprocess.run([sys.executable, "-m", "autograder", "grade", "--help"],
                                       capture_output=True, text=True).stdout


def test_readable_paths_cover_everything_but_the_denied_folders(tmp_path):
    (tmp_path / "course" / "submitted").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "course")
    paths = sandbox.readable_paths([tmp_path / "course"], extra=[tmp_path / "course" / "submitted"])
    assert str(tmp_path / "other") in paths and "/usr" in paths
    assert str(tmp_path / "course") not in paths and str(tmp_path / "link") not in paths
    assert str(tmp_path / "course" / "submitted") in paths  # an extra path inside a denied one
    assert not any(p in ("/", str(tmp_path), str(tmp_path.parent)) for p in paths)


@pytest.mark.skipif(sandbox.landlock_abi() < 1, reason="Landlock is not available on this system")
def test_the_sandbox_confines_a_process(tmp_path):
    """What a kernel gets: writes only in its folders, no reading the course, no signalling the grader,
    a memory cap, a file-size cap, and an events log it cannot reach."""
    course, job = tmp_path / "course", tmp_path / "job"
    (job / "nb").mkdir(parents=True)
    (job / "tmp").mkdir()
    (job / "private").mkdir()
    course.mkdir()
    (course / "gradebook.db").write_text("grades")
    policy = {"memory_bytes": 1 << 30, "file_bytes": 1 << 20, "processes": 16, "landlock": True,
              "write": [str(job / "nb"), str(job / "tmp")],
              "read": sandbox.readable_paths([course, job], [job / "nb", job / "tmp"]),
              "events": str(job / "private" / "events"), "log": str(job / "private" / "log")}
    code = textwrap.dedent("""
        import json, os, sys
        from autograder.grading import sandbox
        sandbox.confine(json.loads(os.environ["POLICY"]))()
        def own_library():  # a copy of one of Python's own extension modules, written in its folder, imported
            import _json, importlib.util, shutil
            shutil.copyfile(_json.__file__, "mine" + os.path.basename(_json.__file__)[5:])
            spec = importlib.util.spec_from_file_location("_json", os.path.abspath("mine" +
                                                          os.path.basename(_json.__file__)[5:]))
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
        def attempt(f):
            try:
                f()
                return "ok"
            except BaseException as err:
                return type(err).__name__
        results = {
            "write here": attempt(lambda: open("x", "w").write("x")),
            "read course": attempt(lambda: open(COURSE + "/gradebook.db").read()),
            "write course": attempt(lambda: open(COURSE + "/gradebook.db", "a").write("x")),
            "delete course": attempt(lambda: os.remove(COURSE + "/gradebook.db")),
            "events log": attempt(lambda: open(EVENTS, "a").write("x")),
            "signal grader": attempt(lambda: os.kill(os.getppid(), 0)),
            "memory": attempt(lambda: bytearray(2 << 30)),
            "big file": attempt(lambda: open("big", "wb").write(b"x" * (2 << 20))),
            "numpy": attempt(lambda: __import__("numpy")),
        }
        open("results.json", "w").write(json.dumps(results))
    """).replace("COURSE", repr(str(course))).replace("EVENTS", repr(str(job / "private" / "events")))
    env = dict(os.environ, POLICY=json.dumps(policy), PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-c", code], cwd=job / "nb", env=env, capture_output=True, text=True)
    assert result.returncode == 0, (job / "private" / "log").read_text()
    results = json.loads((job / "nb" / "results.json").read_text())
    assert results["write here"] == "ok" and results["numpy"] == "ok"
    assert results["read course"] == results["write course"] == results["delete course"] == "PermissionError"
    assert results["events log"] == "PermissionError"
    assert results["memory"] == "MemoryError" and results["big file"] == "OSError"
    if sandbox.landlock_abi() >= 6:
        assert results["signal grader"] == "PermissionError"
    assert (course / "gradebook.db").read_text() == "grades"
    events = (job / "private" / "events").read_text()
    assert "write-outside" in events and "gradebook.db" in events


def test_rule_paths_let_the_deeper_of_allow_and_deny_win(tmp_path):
    (tmp_path / "repo" / "pkg" / "checks").mkdir(parents=True)
    (tmp_path / "repo" / "pkg" / "a.py").write_text("")
    (tmp_path / "repo" / "notebooks").mkdir()
    (tmp_path / "scratch" / "job").mkdir(parents=True)
    (tmp_path / "scratch" / "other").mkdir()
    (tmp_path / "scratch" / "to-checks").symlink_to(tmp_path / "repo" / "pkg" / "checks")
    (tmp_path / "scratch" / "to-a").symlink_to(tmp_path / "repo" / "pkg" / "a.py")
    paths = sandbox.rule_paths([tmp_path / "repo" / "pkg", tmp_path / "scratch", "/usr"],
                               [tmp_path / "repo" / "pkg" / "checks", tmp_path / "scratch" / "other"])
    assert "/usr" in paths and str(tmp_path / "repo" / "pkg" / "a.py") in paths
    assert str(tmp_path / "scratch" / "job") in paths and str(tmp_path / "scratch" / "to-a") in paths
    for hidden in ("repo", "repo/pkg", "repo/pkg/checks", "repo/notebooks", "scratch", "scratch/other",
                   "scratch/to-checks"):
        assert str(tmp_path / hidden) not in paths, hidden
    assert not any(p in ("/", str(tmp_path)) or p.startswith(str(tmp_path / "repo" / "notebooks")) for p in paths)


@pytest.mark.skipif(sandbox.landlock_abi() < 1 or not sandbox.seccomp_supported(),
                    reason="needs Landlock and seccomp")
def test_the_checks_cannot_be_read_and_modes_cannot_change(tmp_path):
    """What a grading kernel gets (the worker's policy): the judge's checks unreadable; nothing of the course,
    the repository or another folder readable; chmod and chown refused everywhere, even as root; the memory cap
    fixed (what the allocation watcher and the judge compare with) and no seccomp filter of the notebook's own
    (it would take the watcher's notifications)."""
    from autograder.grading import worker
    lib = worker._stage_packages(tmp_path / "scratch" / "lib")
    job, course = tmp_path / "scratch" / "job", tmp_path / "course"
    for sub in ("nb", "tmp", "private"):
        (job / sub).mkdir(parents=True)
    course.mkdir()
    (course / "gradebook.db").write_text("grades")
    (course / "gradebook.db").chmod(0o644)
    (tmp_path / "elsewhere.txt").write_text("not for students")
    policy = {"memory_bytes": 2 << 30, "file_bytes": 1 << 20, "processes": 16, "landlock": True, "seccomp": True,
              **worker.file_policy(lib, [str(job / "nb"), str(job / "tmp")], [str(course), str(tmp_path / "scratch")]),
              "home": str(job / "tmp"), "events": str(job / "private" / "events"), "log": str(job / "private" / "log")}
    code = textwrap.dedent("""
        import json, os, resource, socket
        from autograder.grading import sandbox
        sandbox.confine(json.loads(os.environ["POLICY"]))()
        def own_library():  # a copy of one of Python's own extension modules, written in its folder, imported
            import _json, importlib.util, shutil
            shutil.copyfile(_json.__file__, "mine" + os.path.basename(_json.__file__)[5:])
            spec = importlib.util.spec_from_file_location("_json", os.path.abspath("mine" +
                                                          os.path.basename(_json.__file__)[5:]))
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
        def attempt(f):
            try:
                f()
                return "ok"
            except BaseException as err:
                return type(err).__name__
        results = {
            "repository checks": attempt(lambda: open(REPO + "/autograder/grading/exercises/a01_graphs.py").read()),
            "solutions": attempt(lambda: open(REPO + "/notebooks/source/01_graphs/01_graphs.ipynb").read()),
            "course": attempt(lambda: open(COURSE + "/gradebook.db").read()),
            "elsewhere": attempt(lambda: open(ELSEWHERE).read()),
            "chmod course": attempt(lambda: os.chmod(COURSE + "/gradebook.db", 0)),
            "chown course": attempt(lambda: os.chown(COURSE + "/gradebook.db", 1, 1)),
            "chmod check": attempt(lambda: os.chmod(REPO + "/autograder/grading/exercises/a01_graphs.py", 0o777)),
            "chmod own": attempt(lambda: os.chmod(".", 0o700)),
            "device node": attempt(lambda: os.mknod("disk", 0o600 | 0o060000, os.makedev(8, 0))),
            "numpy": attempt(lambda: __import__("numpy").ones(3).sum()),
            "machine secrets": attempt(lambda: open("/etc/shadow").read()),
            "home": attempt(lambda: os.listdir("/root")),
            "raw socket": attempt(lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW)),
            "lower the memory cap": attempt(lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 2 << 30))),
            "prlimit the memory cap": attempt(lambda: resource.prlimit(0, resource.RLIMIT_AS, (1 << 30, 2 << 30))),
            "read the memory cap": attempt(lambda: resource.prlimit(0, resource.RLIMIT_AS)),
            "lower another limit": attempt(lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))),
            "a seccomp filter": attempt(lambda: sandbox.apply_seccomp()),
            "raise the stack limit": attempt(lambda: resource.setrlimit(resource.RLIMIT_STACK, (64 << 20, 64 << 20))),
            "run a program": attempt(lambda: __import__("subprocess").run(["true"])),
            "load its own library": attempt(lambda: own_library()),
        }
        import ctypes, platform
        libc, machine = ctypes.CDLL(None, use_errno=True), platform.machine()
        def call(*args):  # the errno of a raw call: seccomp(SET_MODE_FILTER, 0, NULL) is EFAULT if let through
            return "ok" if libc.syscall(*args) == 0 else os.strerror(ctypes.get_errno())
        results["seccomp call"] = call(sandbox._SYS_SECCOMP[machine], 1, 0, None)
        results["io_setup"] = call(sandbox._SECCOMP_DENY[machine]["io_setup"], 1, ctypes.byref(ctypes.c_ulong(0)))
        if machine == "x86_64":  # arch_prctl(ARCH_MAP_VDSO_64, address)
            results["map a vDSO"] = call(158, 0x2003, 0x100000000000)
        libc.mmap.restype = ctypes.c_void_p  # MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN: refused by the watcher
        results["grows down"] = "ok" if libc.mmap(None, 1 << 16, 3, 0x122, -1, 0) not in (None, 2**64 - 1) else \
            os.strerror(ctypes.get_errno())
        open("results.json", "w").write(json.dumps(results))
    """).replace("REPO", repr(str(ROOT))).replace(
        "COURSE", repr(str(course))).replace(
        "ELSEWHERE", repr(str(tmp_path / "elsewhere.txt")))
    env = dict(os.environ, POLICY=json.dumps(policy), PYTHONPATH=str(lib))
    result = subprocess.run([sys.executable, "-P", "-c", code], cwd=job / "nb", env=env, capture_output=True, text=True)
    assert result.returncode == 0, (job / "private" / "log").read_text()[-3000:]
    results = json.loads((job / "nb" / "results.json").read_text())
    assert results["numpy"] == "ok", results  # the student lib's imports are allowed
    assert results["repository checks"] == results["solutions"] == "PermissionError"
    assert results["course"] == results["elsewhere"] == "PermissionError"
    assert results["home"] == ("PermissionError" if os.path.isdir("/root") else "FileNotFoundError")
    assert results["machine secrets"] == ("PermissionError" if os.path.exists("/etc/shadow") else "FileNotFoundError")
    assert results["read the memory cap"] == results["lower another limit"] == "ok", results
    assert results["seccomp call"] == os.strerror(errno.EPERM), results
    # no mapping grows without a call the allocation watcher is told of: no stack beyond its pinned limit, no ring of
    # asynchronous I/O, no vDSO mapped on request, no mapping that grows down
    assert results["raise the stack limit"] == "ValueError", results
    assert results["run a program"] == "PermissionError", "a program's own stack and image are out of sight"
    assert results["load its own library"] == "ImportError", "a library's system calls are out of sight"
    assert {results[name] for name in ("io_setup", "map a vDSO", "grows down") if name in results} == {
        os.strerror(errno.EPERM)}, results
    # EPERM, which resource.setrlimit raises as ValueError ("not allowed to raise maximum limit")
    assert (results["lower the memory cap"], results["prlimit the memory cap"]) == ("ValueError", "PermissionError")
    for name in ("chmod course", "chown course", "chmod check", "chmod own", "device node", "a seccomp filter"):
        assert results[name] == "PermissionError", (name, results)
    assert (course / "gradebook.db").stat().st_mode & 0o777 == 0o644
    try:  # root's capabilities are gone (the test itself, if root, may open a raw socket)
        socket.socket(socket.AF_PACKET, socket.SOCK_RAW).close()
        assert results["raw socket"] == "PermissionError", results
    except (PermissionError, AttributeError):
        pass
    events = [json.loads(line) for line in (job / "private" / "events").read_text().splitlines()]
    kinds = {kind for kind, _ in events}
    assert {"read-secret", "mode-outside", "limit", "program-refused", "native", "native-refused"} <= kinds, events
    assert {"syscall", "mmap"} <= {detail for kind, detail in events if kind == "native"}, "ctypes' raw calls"
    assert any(kind == "mode-outside" and "gradebook.db" in detail for kind, detail in events)


def test_feedback_filters_hidden_lines_out_of_whatever_was_printed():
    """A submission that prints the hidden tests it ran inside (IPython's ``In``) or the checks'
    source, as text, as a repr, as HTML or in an error, shows ``[hidden test]`` in their place;
    its own output and the checks' messages stay."""
    from nbformat.v4 import new_code_cell, new_notebook, new_output
    checks_dir = str(JUDGE_CHECKS.resolve())
    module, check = "a01_graphs", "walk"
    check_line = next(line.strip() for line in (Path(checks_dir) / f"{module}.py").read_text().splitlines()
                      if line.strip().startswith("expect(") and len(line.strip()) > 40)
    test_source = (f"assert walk(x) == []\n### BEGIN HIDDEN TESTS\nfrom autograder.checks import {module}\n"
                   f"{module}.{check}(answer)\n### END HIDDEN TESTS")
    history = "\n".join(["x = 1", test_source])
    outputs = [
        new_output("stream", name="stdout", text=f"my own line\n{history}\n    {check_line}\n"),
        new_output("execute_result", data={"text/plain": repr(history)}, execution_count=3),
        new_output("display_data", data={"text/html": "<pre>" + html.escape(history) + "</pre>",
                                         "text/plain": "<IPython.core.display.HTML object>"}),
        new_output("error", ename="AssertionError", evalue=f"walk on a chain of 25000 additions; {check_line}",
                   traceback=[f"AssertionError: {history}"]),
    ]
    nb = new_notebook(cells=[new_code_cell(test_source, outputs=[]), new_code_cell("print(In)", outputs=outputs)])
    redacted, _ = feedback.RedactHiddenTests(hidden_dirs=[checks_dir]).preprocess(nb, {})
    text = json.dumps(redacted)
    for secret in (f"{module}.{check}(answer)", f"from autograder.checks import {module}", check_line,
                   "BEGIN HIDDEN TESTS"):
        assert json.dumps(secret)[1:-1] not in text, secret
        assert html.escape(secret) not in text, secret
    out = redacted.cells[1].outputs
    assert "my own line" in out[0].text and "assert walk(x) == []" in out[0].text
    assert out[0].text.count(feedback.HIDDEN_LINE) == 5
    assert out[1].data["text/plain"] == feedback.HIDDEN_LINE and "text/html" not in out[2].data
    assert out[3].evalue.startswith(feedback.HIDDEN_LINE) or "walk on a chain" not in check_line


def test_a_write_to_the_gradebook_while_a_reply_is_merged_is_never_kept(tmp_path, monkeypatch):
    """Student code (without Landlock) may write the course's gradebook at any moment, also while the
    grader merges a reply: what it wrote is neither read back nor kept, and the run reports it (CI saw a
    forged manual score land between the old guard's check and its commit, and stay)."""
    from autograder.grading import grade
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    course = Course(tmp_path)
    db = course.sqlite_path
    results = grade.Results(course)  # no gradebook yet: the run creates it

    def merge_with_a_student_writing(gb, assignment, student, result):
        if db.exists():
            with sqlite3.connect(db) as theirs:
                theirs.execute("INSERT INTO student (id) VALUES ('forged')")
        gb.update_or_create_student(student)  # reads the gradebook after the student's write, then commits
        gb.db.commit()

    monkeypatch.setattr(grade.gradebook, "merge_result", merge_with_a_student_writing)
    reply = {"assignment": "01_graphs", "student": "alice", "result": {"notebooks": {}, "timestamp": None},
             "files": {}}
    results.apply(dict(reply, student="bob"))  # publishes the gradebook the student's next write changes
    results.apply(reply)
    db.with_name("gradebook.db-journal").write_bytes(b"a hot journal SQLite would replay")
    results.close()

    def students():
        with sqlite3.connect(db) as ours:
            return sorted(row[0] for row in ours.execute("SELECT id FROM student"))
    assert students() == ["alice", "bob"]
    assert not db.with_name("gradebook.db-journal").exists() and not results.guard.folder.exists()
    assert len(results.guard.events) == 2, results.guard.events
    assert all("changed by another program" in e for e in results.guard.events)

    results = grade.Results(course)
    db.unlink()  # gone while grading ran: put back
    results.close()
    assert students() == ["alice", "bob"] and len(results.guard.events) == 1

    results, before = grade.Results(course), db.read_bytes()  # red team 3: bytes changed in place, mtime put back
    st = db.stat()
    with open(db, "r+b") as f:
        f.seek(len(before) - 1)
        f.write(bytes([before[-1] ^ 1]))
    os.utime(db, ns=(st.st_atime_ns, st.st_mtime_ns))
    results.close()
    assert db.read_bytes() == before and len(results.guard.events) == 1


def test_gradebook_differences_name_each_leaf():
    ours = {"submissions": {"01/a": {"grades": {"walk": [2.0, None]}}}}
    theirs = {"submissions": {"01/a": {"grades": {"walk": [0.0, None]}}, "01/b": {}}}
    assert _differences(ours, theirs) == ["submissions > 01/a > grades > walk: [2.0, None] != [0.0, None]",
                                          "submissions > 01/b: '<missing>' != {}"]
    assert _differences(ours, ours) == []


def test_traceback_redaction():
    hidden = ["### BEGIN HIDDEN TESTS", "from autograder.checks import a03_graph_lifetime", "a03_graph_lifetime.check_hvp(hvp)",
              "### END HIDDEN TESTS"]
    checks_file = str(Path(feedback._hidden_dirs()[0]) / "a03_graph_lifetime.py")
    entries = [
        "\x1b[31m----\x1b[39m",
        "Cell In[3], line 11\n      8 assert walk(x) == []\n      9 ### BEGIN HIDDEN TESTS\n---> 11 a03_graph_lifetime.check_hvp(hvp)\n",
        f"File {checks_file}:42, in check_hvp(hvp)\n     41 x = 1\n---> 42 expect(len(got) == len(expected), 'secret')\n",
        "Cell In[2], line 5, in walk(t)\n      4 def walk(t):\n----> 5     return walk(t)\n",
        "AssertionError: walk on a chain: RecursionError",
    ]
    out = feedback.redact_traceback(entries, hidden, feedback._hidden_dirs())
    text = "\n".join(out)
    assert "check_hvp" not in text and "expect(" not in text and "BEGIN HIDDEN" not in text
    assert "assert walk(x) == []" in text and "return walk(t)" in text
    assert text.endswith("AssertionError: walk on a chain: RecursionError")
    source, lines = feedback.hidden_regions("x = 1\n### BEGIN HIDDEN TESTS\nsecret()\n### END HIDDEN TESTS\ny = 2")
    assert source == f"x = 1\n{feedback.HIDDEN_NOTE}\ny = 2" and "secret()" in lines


def test_a_visible_helpers_lines_stay_visible_in_feedback():
    """Issue 28: a traceback through the visible attempt() helper showed its lines as [hidden test] when a hidden
    region held the same line; a line the student can read in the notebook is not hidden."""
    setup = ("def attempt(what, fn, *args):\n    try:\n        return fn(*args)\n    except Exception as err:\n"
             "        message = f'{what}: got {err}'\n    raise AssertionError(message) from None")
    tests = ("got = attempt('walk(x)', walk, x)\n### BEGIN HIDDEN TESTS\nmessage = secret_graph_message()\n"
             "raise AssertionError(message) from None\n### END HIDDEN TESTS")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(setup), nbformat.v4.new_code_cell(tests)])
    nb.cells[1].outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue="walk(x): got 1", traceback=[
        "Cell In[5], line 1\n----> 1 got = attempt('walk(x)', walk, x)\n",
        "Cell In[2], line 6, in attempt(what, fn, *args)\n      5     message = f'{what}: got {err}'\n"
        "----> 6     raise AssertionError(message) from None\n",
        "Cell In[5], line 3\n----> 3 message = secret_graph_message()\n", "AssertionError: walk(x): got 1"])]
    nb, _ = feedback.RedactHiddenTests().preprocess(nb, {})
    text = "\n".join(nb.cells[1].outputs[0].traceback)
    assert "----> 6     raise AssertionError(message) from None" in text
    assert "secret_graph_message" not in text and f"----> 3 {feedback.HIDDEN_LINE}" in text


def test_collect_from_a_plain_folder_without_a_roster(tmp_path):
    from nbgrader.api import Gradebook
    from autograder.collect import collect
    course_dir = tmp_path / "course"
    course_dir.mkdir()
    shutil.copy(build.NOTEBOOKS / "nbgrader_config.py", course_dir)
    course = Course(course_dir)  # also puts this environment's bin/ (alembic) on PATH
    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}", "chibigrad") as gb:
        gb.add_assignment("01_graphs")
        gb.add_notebook("01_graphs", "01_graphs")
    nb = nbformat.writes(nbformat.v4.new_notebook()).encode()
    source = tmp_path / "export"
    for rel in ("alice/01_graphs/01_graphs.ipynb", "Bob Smith/01_graphs.ipynb", "carol/notes.txt", "dave/mystery.ipynb"):
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_bytes(nb)
    latin1 = os.path.join(os.fsencode(source), b"J\xf6rg")
    os.mkdir(latin1)
    with open(os.path.join(latin1, b"01_graphs (1).ipynb"), "wb") as f:
        f.write(nb)
    rows = collect(course, source)
    placed = {(r["student"], r["assignment"]) for r in rows if r["status"] == "placed"}
    assert placed == {("alice", "01_graphs"), ("bob-smith", "01_graphs"), ("jorg", "01_graphs")}
    notes = {r["file"]: r for r in rows}
    assert notes["carol/notes.txt"]["status"] == "not placed" and "not a notebook" in notes["carol/notes.txt"]["notes"]
    assert "which assignment" in notes["dave/mystery.ipynb"]["notes"]
    assert "not valid UTF-8" in next(r["notes"] for r in rows if r["student"] == "jorg")
    assert (course_dir / "submitted" / "jorg" / "01_graphs" / "01_graphs.ipynb").is_file()
    assert (course_dir / "submitted" / "alice" / "01_graphs" / "timestamp.txt").read_text().endswith(" UTC")


# ---- the term, end to end -------------------------------------------------------------------------------------------

def _dump(course_dir, students=None):
    data = gradebook.dump(Course(course_dir).db_url, "chibigrad")
    return data if students is None else _restrict(data, students)


def _restrict(data, students):
    return dict(data, submissions={k: v for k, v in data["submissions"].items() if k.split("/")[1] in students},
                students={k: v for k, v in data["students"].items() if k in students})


def _differences(ours, theirs, path=()):
    """Where two gradebook dumps differ, one line per leaf: short enough for a CI log's tail."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return [line for key in sorted(set(ours) | set(theirs), key=str)
                for line in _differences(ours.get(key, "<missing>"), theirs.get(key, "<missing>"), (*path, key))]
    return [] if ours == theirs else [f"{' > '.join(map(str, path))}: {ours!r} != {theirs!r}"]


def assert_same_gradebook(ours, theirs, course_dirs):
    """``ours == theirs``, or a failure that names each differing grade and what grading noted
    about those submissions in each course (timeouts, notes), to tell a bug from load."""
    lines = _differences(ours, theirs)
    if not lines:
        return
    notes = []
    for key in sorted({line.split(" > ")[1] for line in lines if line.startswith("submissions > ")}):
        assignment, student = key.split("/")
        for course_dir in course_dirs:
            path = Path(course_dir) / "grading" / "records" / assignment / f"{student}.json"
            record = json.loads(path.read_text()) if path.exists() else {}
            notes.append(f"{Path(course_dir).name} {key}: notes {record.get('notes')}, "
                         f"timings {record.get('timings')}")
    raise AssertionError("the gradebooks differ:\n" + "\n".join(lines[:40] + notes))


def _sha(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _mode(path):
    st = Path(path).stat()
    return st.st_mode, st.st_uid, st.st_gid


def _stray_processes():
    """The many-processes student's processes still running (working in its folder ``sleep-<MARKER>``)."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            folder = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if f"sleep-{synthetic_classes.MARKER}" in folder:
            found.append(pid)
    return found


pytestmark = pytest.mark.xdist_group("autograder")  # one `term` per run, also under pytest-xdist --dist loadgroup


@pytest.fixture(scope="session")
def term(tmp_path_factory):
    """Release, collect, grade (2 workers); a copy of the collected course for serial nbgrader and one for shards."""
    base = tmp_path_factory.mktemp("term")
    course_dir = synthetic_classes.course_copy(base, ASSIGNMENTS)
    times = {}
    start = time.perf_counter()
    autograder(course_dir, "release", "--all", "--no-zip", "--dest", base / "student", "--due", "01_graphs=2030-01-15T23:59",
               "--due", "02_backward=2030-01-15T23:59")
    times["release_s"] = time.perf_counter() - start
    targets = {"gradebook": course_dir / "gradebook.db",
               "other": course_dir / "submitted" / "a01-solutions" / "01_graphs" / "01_graphs.ipynb",
               "source": course_dir / "source" / "01_graphs" / "01_graphs.ipynb",
               "release": course_dir / "release" / "01_graphs" / "01_graphs.ipynb",
               "solutions": build.NOTEBOOKS / "source" / "01_graphs" / "01_graphs.ipynb",
               "checks": ROOT / "autograder" / "grading" / "exercises" / "a01_graphs.py"}
    students01 = (synthetic_classes.normal_students(course_dir, "01_graphs")
                  + synthetic_classes.hostile_students(course_dir, targets=targets)
                  + synthetic_classes.snooping_students(course_dir, targets)
                  + synthetic_classes.gaming_students(course_dir))
    students02 = (synthetic_classes.normal_students(course_dir, "02_backward")
                  + [synthetic_classes.numpy_patch_student(course_dir)])
    roster = synthetic_classes.roster_rows(students01 + students02)
    synthetic_classes.write_roster(base / "roster.csv", roster)
    synthetic_classes.canvas_zip(base / "canvas-01_graphs.zip", students01, roster)
    synthetic_classes.moodle_zip(base / "moodle-02_backward.zip", students02, roster)
    collected = [autograder(course_dir, "collect", base / "canvas-01_graphs.zip", "--roster", base / "roster.csv",
                            "--assignment", "01_graphs").stdout,
                 autograder(course_dir, "collect", base / "moodle-02_backward.zip", "--roster", base / "roster.csv").stdout]
    copies = {}
    for name in ("serial", "sharded"):
        copies[name] = base / name
        shutil.copytree(course_dir, copies[name])
        for student_dir in (copies[name] / "submitted").iterdir():
            if student_dir.name not in COMPARED:
                shutil.rmtree(student_dir)
    hashes = {name: _sha(path) for name, path in targets.items() if name != "gradebook"}
    modes = {name: _mode(path) for name, path in targets.items()}
    modes.update({str(p.relative_to(ROOT)): _mode(p) for p in JUDGE_CHECKS.glob("*.py")})
    start = time.perf_counter()
    graded = autograder(course_dir, "grade", "--workers", 2, "--cell-timeout", CELL_TIMEOUT)
    times["grade_s"] = time.perf_counter() - start
    times["grade_summary"] = graded.stdout.splitlines()[0]
    out = ROOT / "_build" / "autograder"
    out.mkdir(parents=True, exist_ok=True)
    (out / "test_times.json").write_text(json.dumps(times, indent=1) + "\n")
    return {"dump": _dump(course_dir), "base": base, "course": course_dir, "students": students01 + students02, "collected": collected,
            "graded": graded, "copies": copies, "targets": targets, "hashes": hashes, "modes": modes,
            "times": times}


@pytest.mark.slow
def test_collect_places_everything_and_reports_the_rest(term):
    rows = []
    for path in sorted((term["course"] / "grading" / "collect").glob("collect-*.csv")):
        with open(path, newline="") as f:
            rows += list(csv.DictReader(f))
    by_file = {r["file"]: r for r in rows}
    placed = {(r["student"], r["assignment"]) for r in rows if r["status"] == "placed"}
    for st in term["students"]:
        assert (synthetic_classes._student_id(st.id), st.assignment) in placed, st.id
    assert any(r["status"] == "not placed" and "not a notebook" in r["notes"] for r in rows)
    assert any(r["status"] == "not placed" and "not on the roster" in r["notes"] for r in rows)
    assert any(r["status"] == "duplicate, not used" and r["student"] == "duplicate" for r in rows)
    assert "renamed to 01_graphs.ipynb" in next(r["notes"] for r in rows if r["student"] == "renamed")
    assert "not valid UTF-8" in next(r["notes"] for r in rows if r["student"] == "mueller")
    assert "late by 2.0 days" in next(r["notes"] for r in rows if r["student"] == "a01-late")
    assert "not valid notebook JSON" in next(r["notes"] for r in rows if r["student"] == "bad-json")
    assert len(by_file) == len(rows)
    submitted = nbformat.read(term["course"] / "submitted" / "duplicate" / "01_graphs" / "01_graphs.ipynb", as_version=4)
    assert next(c.source for c in submitted.cells if c.id == "walk") != "def walk(t):\n    return []", "the later copy"


@pytest.mark.slow
def test_every_submission_gets_exactly_its_points(term):
    from nbgrader.api import Gradebook
    course = Course(term["course"])
    problems = []
    with Gradebook(course.db_url, course.course_id) as gb:
        for (assignment, student), want in synthetic_classes.expected_scores(term["students"]).items():
            nb = gb.find_submission_notebook(assignment, assignment, student)
            got = {g.name[:-len("-tests")]: g.score for g in nb.grades}
            if got != {k: float(v) for k, v in want.items()}:
                problems.append(f"{student}/{assignment}: got {got}, expected {want}; "
                                f"notes {course.read_record(assignment, student)['notes']}")
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_the_report_says_what_happened_to_each_hostile_submission(term):
    course = Course(term["course"])
    problems = []
    for st in term["students"]:
        record = course.read_record(st.assignment, synthetic_classes._student_id(st.id))
        assert record["status"] in ("graded", "missing") and not record["error"], (st.id, record["error"])
        text = " ".join(record["notes"])
        for keyword in st.notes:
            if keyword in ("late", "latest of 2", "renamed", "not valid UTF-8"):
                continue  # collect's notes, checked above
            if keyword not in text:
                problems.append(f"{st.id}: {keyword!r} not in {record['notes']}")
    assert not problems, "\n".join(problems)
    autograder(term["course"], "report")
    page = (term["course"] / "reports" / "report.html").read_text()
    # (patches of a judged assignment's own process leave nothing to report: the points are lost at the judge)
    for sid in ("infinite-loop", "swallows-interrupt", "os-exit", "many-processes", "prints-megabytes",
                "deletes-files", "writes-gradebook", "patches-helpers", "bad-json"):
        assert f"<td>{sid}</td>" in page, sid
    assert page.count("<img ") == 4
    difficulty = page.split("Exercises by difficulty")[1].split("<h2>")[0]
    assert "<td>01_graphs</td><td>walk</td>" in difficulty and "x)</td>" in difficulty, "mean, pass rate, a failure"
    assert "never-submitted" not in page.split("Missing submissions")[1], "due in 2030: not missing yet"


@pytest.mark.slow
def test_hostile_code_changed_nothing_outside_its_folder(term):
    """Contents, modes and owners of the gradebook, a classmate's notebook, the source and released
    notebooks, the repository's solutions and every check module, after the chmods-files student
    (and the rest of the class) tried to change them."""
    for name, digest in term["hashes"].items():
        assert _sha(term["targets"][name]) == digest, f"{name} changed"
    for name, before in term["modes"].items():
        path = term["targets"].get(name) or ROOT / name
        assert _mode(path) == before, f"{name}: mode or owner changed from {before} to {_mode(path)}"
    checks = [name for name in term["modes"] if name.startswith("autograder/")]
    assert len(checks) == len(list(JUDGE_CHECKS.glob("*.py"))) >= 13
    assert "gradebook" in term["modes"] and "other" in term["modes"]
    db = sqlite3.connect(term["targets"]["gradebook"])
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("SELECT count(*) FROM grade WHERE manual_score IS NOT NULL").fetchone()[0] == 0
    assert not (term["course"].parent / "escape.txt").exists()
    assert not _stray_processes(), "processes started by a submission are still running"
    # what the kernel wrote in its folder stayed in the scratch copy; the link it made in place of its notebook
    # (to the source notebook, whose hash is checked above) was removed before nbgrader wrote the graded notebook
    for sid in ("plants-files", "shadows-checks", "links-notebook"):
        kept = sorted(p.name for p in (term["course"] / "autograded" / sid / "01_graphs").rglob("*"))
        assert kept == ["01_graphs.ipynb", "timestamp.txt"], (sid, kept)
    chatty = term["course"] / "autograded" / "prints-megabytes" / "01_graphs" / "01_graphs.ipynb"
    assert chatty.stat().st_size < 5_000_000
    assert "WARNING" not in term["graded"].stdout, term["graded"].stdout


@pytest.mark.slow
def test_parallel_grading_leaves_the_gradebook_as_serial_nbgrader_does(term):
    serial = term["copies"]["serial"]
    for assignment in ASSIGNMENTS:
        result = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", assignment], cwd=serial,
                                capture_output=True, text=True, env=build.nbgrader_env(), timeout=1200)
        assert result.returncode == 0, result.stderr[-3000:]
    ours, theirs = _restrict(term["dump"], COMPARED), _dump(serial, COMPARED)
    assert ours["submissions"]
    assert_same_gradebook(ours, theirs, [term["course"]])
    for student in COMPARED:
        for assignment in ASSIGNMENTS:
            mine = term["course"] / "autograded" / student / assignment / f"{assignment}.ipynb"
            other = serial / "autograded" / student / assignment / f"{assignment}.ipynb"
            assert mine.exists() == other.exists()
            if mine.exists():
                a, b = nbformat.read(mine, as_version=4), nbformat.read(other, as_version=4)
                assert [c.source for c in a.cells] == [c.source for c in b.cells]


@pytest.mark.slow
def test_shards_merged_equal_a_single_run(term):
    sharded = term["copies"]["sharded"]
    # no hostile code among COMPARED: a generous timeout keeps a loaded machine from changing a score
    runs = [subprocess.Popen([sys.executable, "-m", "autograder", "--course", str(sharded), "grade", "--shard",
                              f"{i}/2", "--workers", "1", "--cell-timeout", "120"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=build.nbgrader_env())
            for i in (1, 2)]
    for run in runs:
        out, err = run.communicate(timeout=1200)
        assert run.returncode == 0, err[-3000:]
    assert _dump(sharded)["submissions"] == {}, "shards do not write the gradebook"
    assert len(list((sharded / "grading" / "shards").glob("*-of-2/*/*.json"))) == len(COMPARED)
    assert "merged 7 submission(s)" in autograder(sharded, "merge").stdout
    assert_same_gradebook(_dump(sharded, COMPARED), _restrict(term["dump"], COMPARED), [sharded, term["course"]])
    assert "nothing to grade" in autograder(sharded, "grade").stdout


@pytest.mark.slow
def test_regrading_is_idempotent_and_keeps_manual_grades(term):
    from nbgrader.api import Gradebook
    course = Course(term["course"])
    before = _dump(term["course"])
    assert "nothing to grade" in autograder(term["course"], "grade").stdout
    assert _dump(term["course"]) == before
    with Gradebook(course.db_url, course.course_id) as gb:
        grade = gb.find_grade("walk-tests", "01_graphs", "01_graphs", "a01-wrong-0")
        grade.manual_score = 1.5
        comment = gb.find_comment("walk", "01_graphs", "01_graphs", "a01-wrong-0")
        comment.manual_comment = "Nearly: see the seen set."
        gb.db.commit()
    marked = _dump(term["course"])
    autograder(term["course"], "grade", "--force", "--student", "a01-wrong-0", "--student", "a01-solutions",
               "--cell-timeout", CELL_TIMEOUT)
    after = _dump(term["course"])
    key = "01_graphs/a01-wrong-0"
    grades = after["submissions"][key]["notebooks"]["01_graphs"]["grades"]
    assert grades["walk-tests"] == [0.0, 1.5, None, True], "manual score kept, flagged for review as nbgrader does"
    assert after["submissions"][key]["notebooks"]["01_graphs"]["comments"]["walk"][1] == "Nearly: see the seen set."
    marked["submissions"][key]["notebooks"]["01_graphs"]["grades"]["walk-tests"][3] = True
    assert after == marked


def _hidden_lines():
    """Lines a student must never see: hidden-test regions and the check modules' source (long lines
    that appear nowhere in what students get)."""
    visible = set()
    for assignment in ASSIGNMENTS:
        for cell in nbformat.read(build.NOTEBOOKS / "source" / assignment / f"{assignment}.ipynb",
                                  as_version=4).cells:
            visible.update(line.strip() for line in feedback.hidden_regions(cell.source)[0].splitlines())
    lines = set()
    for assignment in ASSIGNMENTS:
        for cell in nbformat.read(build.NOTEBOOKS / "source" / assignment / f"{assignment}.ipynb",
                                  as_version=4).cells:
            lines.update(line.strip() for line in feedback.hidden_regions(cell.source)[1])
    for path in JUDGE_CHECKS.glob("*.py"):
        lines.update(line.strip() for line in path.read_text().splitlines())
    return {line for line in lines if len(line) >= 25 and line not in visible and not line.startswith(("#", '"""'))}


def _html_text(path):
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text()))


@pytest.mark.slow
def test_feedback_has_no_hidden_tests(term):
    course_dir = term["course"]
    result = autograder(course_dir, "feedback")
    files = sorted((course_dir / "feedback").glob("*/*/*.html"))
    graded = {(p.parent.parent.name, p.parent.name) for p in (course_dir / "autograded").glob("*/*/*.ipynb")}
    assert {(p.parent.parent.name, p.parent.name) for p in files} == graded, result.stdout
    hidden = _hidden_lines()
    leaks = {}
    for path in files:
        text = _html_text(path)
        student, assignment = path.parent.parent.name, path.parent.name
        own = (course_dir / "submitted" / student / assignment / path.with_suffix(".ipynb").name).read_text()
        found = [line for line in hidden if line in text and json.dumps(line)[1:-1] not in own]  # not their own code
        if found:
            leaks[str(path.relative_to(course_dir))] = found[:3]
    assert not leaks, leaks
    assert not [p.name for p in files if ">Test cell<" in p.read_text()], "the score summary names the exercises"
    assert not [p.name for p in files if re.search(r'src="https?://', p.read_text())], "nothing loaded from the network"
    spy = _html_text(course_dir / "feedback" / "prints-hidden-tests" / "01_graphs" / "01_graphs.html")
    assert spy.count(feedback.HIDDEN_LINE) >= 20, "it printed the hidden tests: the filter replaced them"
    planted = sorted(p.name for p in (course_dir / "feedback" / "plants-files" / "01_graphs").iterdir())
    assert planted == ["01_graphs.html", "timestamp.txt"], planted
    capped = "a01-wrong-3"  # walk__stops_at_20000: passes the visible tests, fails the hidden 25,000-node chain
    assert "walk on a chain of 25000 additions" in _html_text(
        course_dir / "feedback" / capped / "01_graphs" / "01_graphs.html"), "the checks' messages stay"
    autograder(course_dir, "feedback", "01_graphs", "--student", capped, "--reveal-hidden")
    revealed = _html_text(course_dir / "feedback" / capped / "01_graphs" / "01_graphs.html")
    # a judged notebook's hidden region is one comment naming the judge's check (its lines never reach the kernel),
    # shown only when revealed; the leak check reads the judge's lines (before the in-kernel checks were removed it
    # passed here by accident: a removed helper's line was a substring of the setup cell's visible `attempt`)
    region = "# judged in the grader's own process: autograder/grading/exercises/a01_graphs.py, walk"
    assert region in revealed and region not in spy, "--reveal-hidden shows the hidden regions, feedback does not"
    judge_line = 'got = student.call("walk", recipe, observe="graph_nodes", what=what, timeout=30)'
    assert judge_line in (JUDGE_CHECKS / "a01_graphs.py").read_text() and judge_line in hidden
    autograder(course_dir, "feedback", "01_graphs", "--student", capped)


@pytest.mark.slow
def test_export_has_a_row_per_student_and_a_column_per_exercise(term):
    autograder(term["course"], "export")
    with open(term["course"] / "reports" / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows[0]["student_id"] == "(max)" and rows[0]["01_graphs"] == "12" and rows[0]["02_backward"] == "15"
    by_id = {r["student_id"]: r for r in rows[1:]}
    roster = {r["id"] for r in csv.DictReader(open(term["base"] / "roster.csv"))}
    assert set(by_id) == roster
    assert by_id["a01-solutions"]["01_graphs"] == "12" and by_id["a01-solutions"]["02_backward"] == "0"
    assert by_id["os-exit"]["01_graphs:walk"] == "2" and by_id["os-exit"]["01_graphs:find_leaves"] == "0"
    assert by_id["never-submitted"]["01_graphs:walk"] == "" and by_id["never-submitted"]["total"] == "0"
    assert by_id["patches-numpy"]["02_backward:hypot"] == "0" and by_id["patches-numpy"]["02_backward"] == "12"


@pytest.mark.slow
def test_integrity_flags_what_was_tampered_with(term):
    result = autograder(term["course"], "integrity")
    with open(term["course"] / "reports" / "integrity.csv", newline="") as f:
        findings = list(csv.DictReader(f))
    by_student = {}
    for f in findings:
        by_student.setdefault(f["student"], set()).add(f["category"])
    assert "deleted cell" in by_student["a01-deleted-test-cell"]
    # 01_graphs is judged: a monkeypatch of the student's own process is no tampering (nothing of the grader's is
    # there); importing the grader's modules, and every reach outside the folder, is
    unflagged = [sid for sid in ("patches-helpers", "deletes-files", "writes-gradebook", "shadows-checks",
                                 "reads-secrets", "chmods-files", "plants-files", "links-notebook")
                 if "tampering while graded" not in by_student.get(sid, set())]
    assert not unflagged, (unflagged, result.stdout)
    assert "not a valid notebook" in by_student["bad-json"]
    for sid in ("grade-flag-off", "extra-graded-cell"):  # graded all the same: what was changed is listed
        assert {"normalised before grading", "changed cell metadata"} <= by_student[sid], (sid, result.stdout)
    for honest in ("a01-solutions", "a02-solutions", "a01-wrong-0", "a01-wrong-2", "a02-wrong-1", "renamed",
                   "mueller"):
        assert honest not in by_student, (honest, [f for f in findings if f["student"] == honest])


@pytest.mark.slow
def test_without_landlock_what_a_submission_breaks_is_put_back(tmp_path):
    """Where the OS offers no Landlock the attacks reach the real course; the grader notices and
    restores the gradebook and the submissions, and the grades are still exact."""
    course_dir = synthetic_classes.course_copy(tmp_path, ASSIGNMENTS)
    shutil.rmtree(course_dir / "source" / "02_backward")
    shutil.rmtree(course_dir / "source_text" / "02_backward")
    autograder(course_dir, "release", "--all", "--no-zip", "--dest", tmp_path / "student")
    other = course_dir / "submitted" / "a01-solutions" / "01_graphs" / "01_graphs.ipynb"
    targets = {"gradebook": course_dir / "gradebook.db", "other": other}
    students = [st for st in synthetic_classes.normal_students(course_dir, "01_graphs") if st.id == "a01-solutions"] + [
        st for st in synthetic_classes.hostile_students(course_dir, targets=targets) if st.id in ("deletes-files",
                                                                                           "writes-gradebook")]
    for st in students:
        folder = course_dir / "submitted" / st.id / "01_graphs"
        folder.mkdir(parents=True)
        (folder / "01_graphs.ipynb").write_bytes(st.data())
    before = _sha(other)
    result = autograder(course_dir, "grade", "--workers", 2, "--no-landlock", "--cell-timeout", CELL_TIMEOUT)
    assert "not blocked" in result.stdout
    assert "WARNING: gradebook.db was changed by another program while grading ran; restored" in result.stdout
    assert "WARNING: submitted/a01-solutions/01_graphs changed while grading ran; restored" in result.stdout
    assert _sha(other) == before
    db = sqlite3.connect(course_dir / "gradebook.db")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("SELECT count(*) FROM grade WHERE manual_score IS NOT NULL").fetchone()[0] == 0
    from nbgrader.api import Gradebook
    with Gradebook(Course(course_dir).db_url, "chibigrad") as gb:
        for st in students:
            got = {g.name[:-len("-tests")]: g.score for g in gb.find_submission_notebook("01_graphs", "01_graphs",
                                                                                          st.id).grades}
            assert got == {k: float(v) for k, v in st.expected.items()}, (st.id, got)


def test_feedback_shows_what_a_submission_displayed_as_text_never_as_html():
    """A student's displayed HTML, SVG or JavaScript and the Markdown cells they added reach the feedback page
    as escaped text: no tag or handler of theirs is in the page (the red team's script/onerror exfiltration)."""
    from nbconvert import HTMLExporter
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell
    payload = '<script>steal("rt")</script><img src=x onerror="steal(1)">'
    outputs = [new_output("display_data", data={"text/html": payload, "text/plain": "<IPython HTML object>"}),
               new_output("display_data", data={"image/svg+xml": f"<svg>{payload}</svg>"}),
               new_output("display_data", data={"application/javascript": 'steal("js")'}),
               new_output("execute_result", data={"text/markdown": payload, "text/plain": "42"}, execution_count=1),
               new_output("stream", name="stdout", text=payload)]
    locked = new_markdown_cell("## Exercise *1*", metadata={"nbgrader": {"locked": True}})
    nb = new_notebook(cells=[locked, new_code_cell("show()", outputs=outputs), new_markdown_cell(payload),
                             new_raw_cell(payload, metadata={"format": "text/html"})])
    nb, _ = feedback.OutputsAsText().preprocess(nb, {})
    page, _ = HTMLExporter(template_name="classic").from_notebook_node(nb)
    assert "steal(" in page, "the student's text is shown"
    assert not re.search(r"<script>\s*steal|<img[^>]*onerror|<svg>", page), "no tag of the student's"
    data = [o.get("data", {}) for o in nb.cells[1].outputs[:4]]
    assert [sorted(d) for d in data] == [["text/plain"]] * 4
    assert data[1]["text/plain"] == "[image/svg+xml output: not shown in feedback]"
    assert "<em>1</em>" in page, "the release's locked Markdown still renders"


def test_feedback_redaction_takes_the_html_exporters_configuration_without_a_warning(caplog):
    """nbconvert's HTML exporter sets ``display_data_priority`` for every preprocessor: no warning per student."""
    from traitlets.config import Config
    config = Config({"NbConvertBase": {"display_data_priority": ["text/html", "text/plain"]}})
    with caplog.at_level("WARNING"):
        steps = [feedback.RedactHiddenTests(config=config), feedback.OutputsAsText(config=config)]
    assert "not recognized" not in caplog.text
    assert all(step.display_data_priority == ["text/html", "text/plain"] for step in steps)


def test_the_feedback_summary_names_each_exercise_and_the_page_loads_nothing_remote(tmp_path):
    page = tmp_path / "01_graphs.html"
    page.write_text('<script src="https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/latest.js?config=TeX"> </script>\n'
                    '<li><a href="#walk-tests">Test cell</a> (Score: 2.0 / 2.0)</li>\n'
                    '<li><a href="#depth-tests">Test cell</a> (Score: 0.0 / 3.0)</li>')
    feedback.tidy(page, "01_graphs")
    text = page.read_text()
    assert "Test cell" not in text and "http" not in text
    assert '<a href="#walk-tests">Exercise 01.walk</a>' in text and '<a href="#depth-tests">Exercise 01.depth</a>' in text


def test_the_reports_collect_table_shows_the_latest_collect_of_each_assignment(tmp_path):
    from autograder import report
    folder = tmp_path / "grading" / "collect"
    folder.mkdir(parents=True)
    header = "status,file,student,assignment,notebook,notes\n"
    (folder / "collect-20261101-100000.csv").write_text(
        header + "placed,a.ipynb,ann,01_graphs,01_graphs,renamed to 01_graphs.ipynb\nnot placed,x.txt,,01_graphs,,not a notebook\n")
    (folder / "collect-20261102-100000.csv").write_text(header + "placed,b.ipynb,bob,02_backward,02_backward,late by 1.0 days\n")
    (folder / "collect-20261103-100000.csv").write_text(header + "placed,a.ipynb,ann,01_graphs,01_graphs,\n")

    class Course:
        grading = tmp_path / "grading"
    rows = report._collect_rows(Course())
    assert [(r["student"], r["assignment"], r["notes"]) for r in rows] == [("bob", "02_backward", "late by 1.0 days")]
