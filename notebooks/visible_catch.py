"""How many wrong answers do the *visible* tests catch? (What Validate tells a student.)

    .venv/bin/python notebooks/visible_catch.py               # every assignment, a table
    .venv/bin/python notebooks/visible_catch.py 01_graphs -v  # one, with each wrong answer's message

For each assignment, one Python process with the student edition of chibigrad on its path runs,
for the reference solutions and for every ``wrong_answers/<a>/<exercise>__<mistake>.py``, in a
forked child (a fresh namespace, nothing shared between answers): the notebook's code cells in
order up to that exercise's tests cell, the answer in its solution cell, and only the visible part
of the tests cell (before ``### BEGIN HIDDEN TESTS``), as the student edition has it. An answer is
caught when its solution or tests cell raises, writes to stderr or runs past the time limit. The
message it fails with is recorded too: it should be a sentence (an ``AssertionError`` with text),
not a bare engine error.
"""
import argparse
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
HIDDEN = "### BEGIN HIDDEN TESTS"
TIMEOUT_S = 30  # per answer; a student's cell would be interrupted after 60 s


def _cells(assignment, course_dir):
    nb = json.loads((Path(course_dir) / "source" / assignment / f"{assignment}.ipynb").read_text())
    cells = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        meta = cell["metadata"].get("nbgrader", {})
        role = "solution" if meta.get("solution") else "tests" if meta.get("grade") else "code"
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        cells.append({"id": cell["id"], "role": role, "source": source})
    return cells


def cases(assignment, course_dir=HERE, answers=None):
    """``[(name, exercise, code of the solution cell)]``: the reference solutions first (exercise None), then
    the wrong answers in ``answers`` (default: the course's ``wrong_answers/<assignment>``)."""
    found = [("solutions", None, None)]
    folder = Path(answers) if answers else Path(course_dir) / "wrong_answers" / assignment
    for path in sorted(folder.glob("*__*.py")):
        found.append((path.stem, path.stem.split("__")[0], path.read_text()))
    return found


def program(cells, exercise, answer):
    """``[(cell id, what, code)]`` to run for one answer to ``exercise`` (``None``: every exercise, reference
    solutions). Other exercises' tests cells are skipped: exercises are graded independently."""
    steps = []
    for cell in cells:
        if cell["role"] == "solution":
            mine = exercise is None or cell["id"] == exercise
            steps.append((cell["id"], "solution" if mine else "code",
                          answer if (mine and answer is not None) else cell["source"]))
        elif cell["role"] == "tests":
            if exercise is None or cell["id"] == f"{exercise}-tests":
                steps.append((cell["id"], "tests", cell["source"].split(HIDDEN)[0]))
                if exercise is not None:
                    break
        else:
            steps.append((cell["id"], "code", cell["source"]))
    return steps


def _run_one(steps):
    """In a forked child: run the steps in one namespace; a dict saying where and how it failed."""
    import traceback
    namespace = {"__name__": "__main__"}
    err_file = tempfile.TemporaryFile()
    os.dup2(err_file.fileno(), 2)
    sys.stderr = open(2, "w", closefd=False)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    for cell_id, what, code in steps:
        start = err_file.tell()
        try:
            exec(compile(code, f"<cell {cell_id}>", "exec"), namespace)
        except BaseException as err:  # noqa: BLE001 - the verdict, whatever was raised
            sys.stderr.flush()
            tb = traceback.extract_tb(err.__traceback__)
            return {"failed": cell_id, "what": what, "error": type(err).__name__, "message": str(err)[:2000],
                    "line": next((f"{f.filename}:{f.lineno}" for f in reversed(tb) if f.filename.startswith("<cell")),
                                 None)}
        sys.stderr.flush()
        err_file.seek(start)
        written = err_file.read().decode(errors="replace")
        if written.strip() and what != "code":
            return {"failed": cell_id, "what": what, "error": "stderr", "message": written[:2000]}
    return {"failed": None, "what": None, "error": None, "message": ""}


def child_main(assignment, course_dir, timeout, answers=None):
    """Run every case of one assignment (this process imports the student chibigrad once, then forks)."""
    cells = _cells(assignment, course_dir)
    import numpy  # noqa: F401 - imported once, before forking
    if not any("CHIBIGRAD_" in c["source"] for c in cells):  # 09_gpu's setup sets the device up before importing
        import chibigrad  # noqa: F401
    results = []
    for name, exercise, answer in cases(assignment, course_dir, answers):
        read, write = os.pipe()
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            try:
                result = _run_one(program(cells, exercise, answer))
            except BaseException as err:  # noqa: BLE001
                result = {"failed": "runner", "what": "runner", "error": type(err).__name__, "message": str(err)}
            os.write(write, json.dumps(result).encode())
            os._exit(0)
        os.close(write)
        data, deadline = b"", time.monotonic() + timeout
        while True:
            ready, _, _ = select.select([read], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                break
            chunk = os.read(read, 65536)
            if not chunk:
                break
            data += chunk
        os.close(read)
        _, status = os.waitpid(pid, 0)
        if data:
            result = json.loads(data)
        elif os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
            result = {"failed": exercise, "what": "timeout", "error": "timeout",
                      "message": f"still running after {timeout} s"}
        else:
            result = {"failed": exercise, "what": "crash", "error": "crash", "message": f"exit status {status}"}
        result.update(name=name, exercise=exercise, seconds=round(time.perf_counter() - start, 2))
        results.append(result)
    json.dump(results, sys.stdout)


def student_package(dest, course_dir=HERE):
    """Write the student edition of chibigrad (exercise regions stubbed) into ``dest/chibigrad``."""
    from autograder import build
    build.write_student_package(Path(dest) / "chibigrad", build.PACKAGE, course_dir)
    return Path(dest)


def run_assignment(assignment, student_dir, course_dir=HERE, timeout=TIMEOUT_S, answers=None):
    """The results of every case of ``assignment``, run against the chibigrad in ``student_dir``
    (wrong answers from ``answers``, a folder, if given)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHIBIGRAD_")}
    env["PYTHONPATH"] = str(student_dir)
    code = (f"import sys; sys.path.insert(0, {str(HERE)!r}); import visible_catch; "
            f"visible_catch.child_main({assignment!r}, {str(course_dir)!r}, {timeout!r}, {answers and str(answers)!r})")
    result = subprocess.run([sys.executable, "-c", code], cwd=student_dir, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{assignment}: the runner failed:\n{result.stderr[-4000:]}")
    return json.loads(result.stdout)


def is_sentence(result):
    """A failure a student can act on: an AssertionError (or a timeout) with text, not a bare engine error."""
    return result["error"] in ("AssertionError", "timeout") and bool(result["message"].strip())


def summary(results):
    """``{"caught": n, "wrong": n, "percent": p, "missed": [...], "not_sentences": [...], "solutions": result}``."""
    wrong = [r for r in results if r["exercise"] is not None]
    caught = [r for r in wrong if r["failed"] is not None and r["what"] != "code"]
    return {
        "caught": len(caught), "wrong": len(wrong),
        "percent": round(100.0 * len(caught) / len(wrong), 1) if wrong else 100.0,
        "missed": [r["name"] for r in wrong if r not in caught],
        "broken": [f"{r['name']}: {r['failed']}: {r['error']}: {r['message'][:200]}" for r in wrong
                   if r["what"] == "code"],
        "not_sentences": [f"{r['name']}: {r['error']}: {r['message'][:200]}" for r in caught if not is_sentence(r)],
        "solutions": next(r for r in results if r["exercise"] is None),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("assignments", nargs="*")
    parser.add_argument("-v", "--verbose", action="store_true", help="show every wrong answer's message")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--answers", help="wrong answers from this folder instead, '{assignment}' in it replaced "
                                          "(e.g. tests/redteam/{assignment}/wrong)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE.parent))
    from autograder import build
    names = args.assignments or build.assignments()
    report = {}
    with tempfile.TemporaryDirectory() as tmp:
        student_package(tmp)
        for assignment in names:
            answers = args.answers and args.answers.format(assignment=assignment)
            results = run_assignment(assignment, tmp, answers=answers)
            s = summary(results)
            report[assignment] = {k: v for k, v in s.items() if k != "solutions"}
            print(f"{assignment:22} {s['caught']:3}/{s['wrong']:<3} {s['percent']:5.1f}%  caught by visible tests")
            if s["solutions"]["failed"]:
                print(f"   SOLUTIONS FAIL: {s['solutions']}")
            for line in s["broken"]:
                print(f"   BROKEN (a cell that is not the answer's failed): {line}")
            for name in s["missed"]:
                print(f"   missed: {name}")
            for line in s["not_sentences"]:
                print(f"   not a sentence: {line}")
            if args.verbose:
                for r in results:
                    print(f"   {r['name']:45} {r['seconds']:5.2f}s {r['error'] if r['failed'] else 'passes'}: "
                          f"{(r.get('message') or '')[:300]!r}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
