"""Synthetic classes for testing and timing the grader: students made from the solutions and the
wrong-answer corpus, plus every kind of bad input and hostile code the grader must withstand.

``tests/test_autograder.py`` grades it end to end and ``benchmarks/grade_class.py`` times a
100-student version. Each student comes with the points it must get, exercise by exercise.
"""
import copy
import csv
import datetime
import shutil
import zipfile
from pathlib import Path

import nbformat

from autograder import build
from autograder.grading import sandbox

DUE = datetime.datetime(2030, 1, 15, 23, 59, tzinfo=datetime.timezone.utc)
ON_TIME = DUE - datetime.timedelta(days=1)
LATE = DUE + datetime.timedelta(days=2)
MARKER = "317.25"  # the many-processes student's processes sleep 317.25 s in a folder `sleep-317.25`: easy to find
WALKS = ["walk", "summarize", "find_leaves", "depth"]  # 01_graphs's exercises with rules on their source: code the
# grader cannot read (builtins, get_ipython(), exec) anywhere but in another exercise's answer scores all four 0


def course_copy(base, assignments):
    """A fresh course directory under ``base`` with the repository's sources of ``assignments``."""
    course_dir = Path(base) / "course"
    course_dir.mkdir(parents=True)
    shutil.copy(build.NOTEBOOKS / "nbgrader_config.py", course_dir)
    for sub in ("source", "source_text"):
        for name in assignments:
            shutil.copytree(build.NOTEBOOKS / sub / name, course_dir / sub / name)
    return course_dir


def source_notebook(course_dir, assignment):
    return nbformat.read(Path(course_dir) / "source" / assignment / f"{assignment}.ipynb", as_version=4)


def released_notebook(course_dir, assignment):
    return nbformat.read(Path(course_dir) / "release" / assignment / f"{assignment}.ipynb", as_version=4)


def solved_notebook(course_dir, assignment):
    """The released notebook with every solution cell answered as in the source: a student who
    solved everything (and, like a real one, never saw the hidden tests)."""
    answers = {c.id: c.source for c in source_notebook(course_dir, assignment).cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    nb = released_notebook(course_dir, assignment)
    for cell in nb.cells:
        if cell.id in answers:
            cell.source = answers[cell.id]
    return nb


def exercises(course_dir, assignment):
    """``{solution cell id: points}`` in notebook order."""
    nb = source_notebook(course_dir, assignment)
    points = {c.id[:-len("-tests")]: c.metadata.nbgrader["points"] for c in nb.cells
              if c.metadata.get("nbgrader", {}).get("grade")}
    return {c.id: points[c.id] for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")}


def wrong_answers(assignment, corpus=None):
    """``{exercise: [(mistake name, solution cell source)]}`` from ``notebooks/wrong_answers``."""
    corpus = Path(corpus or build.NOTEBOOKS / "wrong_answers") / assignment
    out = {}
    for path in sorted(corpus.glob("*__*.py")):
        exercise, mistake = path.stem.split("__")
        out.setdefault(exercise, []).append((mistake, path.read_text().rstrip("\n")))
    return out


def replace_cell(nb, cell_id, source):
    nb = copy.deepcopy(nb)
    next(c for c in nb.cells if c.id == cell_id).source = source
    return nb


def insert_cell(nb, after_id, source, new_id):
    """A plain code cell (the student's scratch space) after ``after_id``."""
    nb = copy.deepcopy(nb)
    index = next(i for i, c in enumerate(nb.cells) if c.id == after_id)
    nb.cells.insert(index + 1, nbformat.v4.new_code_cell(source, id=new_id))
    return nb


def _full(points, **zero):
    return {e: (0 if e in zero.get("zero", ()) else p) for e, p in points.items()}


# Wrong answers that pass the visible tests earn the judge's named cases they get right (partial credit,
# autograder/grading/judge.py): the capped walk fails the deep graph only, 0.5 of walk's 2 points.
PARTIAL = {("01_graphs", "walk", "stops_at_20000"): 1.5}


class Student:
    def __init__(self, sid, assignment, nb, expected, notes=(), when=ON_TIME, raw=None, filename=None, tags=()):
        self.id, self.assignment, self.nb, self.expected = sid, assignment, nb, expected
        self.notes, self.when, self.raw, self.filename, self.tags = list(notes), when, raw, filename, set(tags)

    def data(self):
        return self.raw if self.raw is not None else nbformat.writes(self.nb).encode()


def normal_students(course_dir, assignment, wrong_per_student=True, corpus=None):
    """Solutions, the untouched release, a deleted test cell, a late one, and the wrong-answer
    corpus packed into as few students as possible (the k-th mistake of every exercise)."""
    points = exercises(course_dir, assignment)
    solved, released = solved_notebook(course_dir, assignment), released_notebook(course_dir, assignment)
    first = next(iter(points))
    deleted = copy.deepcopy(solved)
    deleted.cells = [c for c in deleted.cells if c.id != f"{first}-tests"]
    short = build.number(assignment)
    students = [
        Student(f"a{short}-solutions", assignment, solved, _full(points)),
        Student(f"a{short}-untouched", assignment, released, _full(points, zero=points)),
        Student(f"a{short}-deleted-test-cell", assignment, deleted, _full(points)),
        Student(f"a{short}-late", assignment, solved, _full(points), notes=["late"], when=LATE),
    ]
    corpus_answers = wrong_answers(assignment, corpus)
    rounds = max((len(v) for v in corpus_answers.values()), default=0)
    for k in range(rounds):
        nb, wrong, partial = solved, [], {}
        for exercise, answers in corpus_answers.items():
            if k < len(answers):
                nb = replace_cell(nb, exercise, answers[k][1])
                wrong.append(exercise)
                partial[exercise] = PARTIAL.get((assignment, exercise, answers[k][0]), 0)
        students.append(Student(f"a{short}-wrong-{k}", assignment, nb, {**_full(points, zero=wrong), **partial}))
    return students


def hostile_students(course_dir, assignment="01_graphs", targets=None):
    """Bad input and hostile code, on 01_graphs (exercises walk, summarize, find_leaves, depth,
    trace_backward). ``targets``: absolute paths the file-system attacks aim at (the course's
    gradebook, another student's submission, a source notebook)."""
    points = exercises(course_dir, assignment)
    solved, released = solved_notebook(course_dir, assignment), released_notebook(course_dir, assignment)
    wrong = {e: dict(a) for e, a in wrong_answers(assignment).items()}
    targets = targets or {}
    s = []

    def add(sid, nb, zero=(), notes=(), **kw):
        s.append(Student(sid, assignment, nb, _full(points, zero=zero), notes=notes, **kw))

    # bad input (collect and grading)
    add("bad-json", None, zero=points, raw=b'{"cells": [{"cell_type": "code", "source": "trunc', notes=["not a valid"])
    add("renamed", solved, filename="my_graphs_final.ipynb", notes=["renamed"])
    add("duplicate", solved, notes=["latest of 2"])
    add("m\u00fcller", solved, notes=["not valid UTF-8"], tags={"latin1-name"})
    # hostile code
    add("infinite-loop", replace_cell(solved, "walk", "def walk(t):\n    while True:\n        pass"),
        zero=["walk"], notes=["walk-tests ran past"])
    add("swallows-interrupt", insert_cell(solved, "walk-tests", (
        "import time\nwhile True:\n    try:\n        time.sleep(0.05)\n    except KeyboardInterrupt:\n        pass"),
        "stubborn"), zero=[e for e in points if e != "walk"], notes=["ignored the interrupt"])
    add("memory-hog", replace_cell(solved, "depth", (
        "import numpy as np\n\ndef depth(t):\n    hog = []\n    while True:\n        hog.append(np.ones(10**7))")),
        zero=["depth"], notes=["MemoryError"])
    add("many-processes", insert_cell(solved, "setup", (  # copies of the kernel asleep (it may run no program)
        "import os, time\n"
        f"os.makedirs('sleep-{MARKER}', exist_ok=True)\n"
        "def asleep():\n"
        f"    os.chdir('sleep-{MARKER}')  # where it works, to be found afterwards\n"
        f"    time.sleep({MARKER})\n"
        "    os._exit(0)\n"
        "for _ in range(80):\n"
        "    if os.fork() == 0:\n"
        "        asleep()\n"
        "for _ in range(5):\n"
        "    if os.fork() == 0:\n"
        "        os.setsid()\n"
        "        if os.fork() == 0:\n"
        "            asleep()\n"
        "        os._exit(0)\n"
        "time.sleep(1)"), "spawner"), notes=["processes"])
    add("os-exit", replace_cell(solved, "find_leaves", next(
        c.source for c in solved.cells if c.id == "find_leaves") + "\n\nimport os\nos._exit(3)"),
        zero=["find_leaves", "depth", "trace_backward"], notes=["kernel died"])
    add("sys-exit", replace_cell(solved, "summarize", (
        "import sys\n\ndef summarize(t):\n    sys.exit(1)")), zero=["summarize"], notes=["SystemExit"])
    add("prints-megabytes", insert_cell(solved, "setup", "for _ in range(40):\n    print('x' * 1_000_000)",
                                        "chatty"), notes=["truncated"])
    attack = ["import os, shutil"]
    for path in ["../../../gradebook.db", "../../../../escape.txt", *targets.values()]:
        attack.append(f"for action in (lambda: open({str(path)!r}, 'ab').write(b'x'), lambda: os.remove({str(path)!r})):\n"
                      "    try:\n        action()\n    except OSError:\n        pass")
    add("deletes-files", insert_cell(solved, "setup", "\n".join(attack), "vandal"), notes=["outside its folder"])
    gradebook_attack = ["import sqlite3", "for path in ['../../../gradebook.db', %r]:" % str(targets.get("gradebook", "")),
                        "    try:",
                        "        db = sqlite3.connect(path)",
                        "        db.execute('UPDATE grade SET manual_score = 100, needs_manual_grade = 0')",
                        "        db.commit()",
                        "    except Exception:",
                        "        pass"]
    add("writes-gradebook", insert_cell(replace_cell(solved, "walk", wrong["walk"]["recursive"]), "setup",
                                        "\n".join(gradebook_attack), "forger"), zero=["walk"], notes=["database"])
    # monkeypatching: each would pass the visible tests in the kernel; 01_graphs is judged, so only what the
    # student's process answers counts (and a patched builtin does not change the type the runner reports)
    add("patches-helpers", insert_cell(replace_cell(solved, "walk", wrong["walk"]["stops_at_20000"]), "walk", (
        "from autograder import checks\nfrom autograder.checks import a01_graphs\n"
        "a01_graphs.check_walk = lambda walk: None\nchecks.expect = lambda condition, message: None"), "helper-patch"),
        zero=["walk"], notes=["imported outside its allowance"], tags={"monkeypatch"})
    s[-1].expected["walk"] = PARTIAL[assignment, "walk", "stops_at_20000"]  # the patches change nothing judged
    add("patches-chibigrad", insert_cell(replace_cell(solved, "find_leaves", wrong["find_leaves"]["compares_values"]),
                                         "find_leaves", "import chibigrad\nchibigrad.Tensor.__eq__ = lambda self, other: self is other\n"
                                         "chibigrad.Tensor.__hash__ = object.__hash__", "eq-patch"),
        notes=[], tags={"monkeypatch"})  # judged: its own process, patched, answers right: only answers count
    add("patches-builtins", insert_cell(replace_cell(solved, "walk", next(
        c.source for c in solved.cells if c.id == "walk").replace("return found", "return tuple(found)")), "walk", (
        "import builtins\n_isinstance = isinstance\n"
        "builtins.isinstance = lambda obj, cls: True if cls is list and type(obj) is tuple else _isinstance(obj, cls)"),
        "isinstance-patch"), zero=WALKS, notes=[], tags={"monkeypatch"})  # builtins: the walks' rule (below)
    add("patches-ipython", insert_cell(released, "setup", (
        "get_ipython().input_transformers_post.append(lambda lines: ['pass\\n'])"), "blank-everything"),
        zero=points, notes=[], tags={"monkeypatch"})
    add("shadows-checks", insert_cell(replace_cell(solved, "walk", wrong["walk"]["recursive"]), "setup", (
        "import os\nos.makedirs('autograder/checks', exist_ok=True)\n"
        "open('autograder/__init__.py', 'w').close()\n"
        "open('autograder/checks/__init__.py', 'w').close()\n"
        "with open('autograder/checks/a01_graphs.py', 'w') as f:\n"
        "    f.write('def __getattr__(name):\\n    return lambda *args: None\\n')"), "shadow"),
        zero=["walk"], notes=["named like the grader's packages"], tags={"monkeypatch"})
    return s


# ---- issue 13: tricks for unearned points, and notebooks nbgrader used to give up on ------------------------------

def gaming_students(course_dir, assignment="01_graphs"):
    """Each trick once, on 01_graphs (walk 2, summarize 2, find_leaves 2, depth 3, trace_backward 3
    points), with the points its honest part earns: tricks earn nothing, and a notebook whose
    nbgrader metadata was changed still gets exactly what its code earns."""
    points = exercises(course_dir, assignment)
    solved = solved_notebook(course_dir, assignment)
    wrong = {e: dict(a) for e, a in wrong_answers(assignment).items()}
    s = []

    def add(sid, nb, zero=(), notes=(), **kw):
        s.append(Student(sid, assignment, nb, _full(points, zero=zero), notes=notes, **kw))

    unanswered = 'raise NotImplementedError("Exercise 01.{0}: replace this line with your code")'
    displays = solved
    for exercise, arg in (("walk", "t"), ("summarize", "t")):
        displays = replace_cell(displays, exercise, f"def {exercise}({arg}):\n    import sys\n"
                                f"    sys.displayhook('ok')  # the kernel's displayhook: an execute_result\n"
                                f"    {unanswered.format(exercise)}")
    add("displays-before-raise", displays, zero=["walk", "summarize"])
    add("pre-run-display", insert_cell(released_notebook(course_dir, assignment), "setup", (
        "def _show(*args):\n    get_ipython().displayhook(1.0)\n\n"
        "get_ipython().events.register('pre_run_cell', _show)"), "callback"), zero=points)
    fake_import = (
        "import builtins, types\n\n"
        "class _Anything(types.ModuleType):\n"
        "    def __getattr__(self, name):\n        return _Anything(name)\n\n"
        "    def __call__(self, *args, **kwargs):\n        return None\n\n"
        "_import = builtins.__import__\n\n"
        "def _fake_import(name, globals=None, locals=None, fromlist=(), level=0):\n"
        "    if name.startswith('autograder'):\n        return _Anything(name)\n"
        "    return _import(name, globals, locals, fromlist, level)\n\n"
        "globals()['__builtins__'] = dict(vars(builtins), __import__=_fake_import)")
    # (a walk that passes the visible tests, so that only the hidden checks it fakes stand between it and points)
    add("replaces-builtins-dict", insert_cell(replace_cell(solved, "walk", wrong["walk"]["stops_at_20000"]), "setup",
                                              fake_import, "fake-imports"),
        zero=points, notes=[], tags={"monkeypatch"})  # its fake imports break the judge's runner too
    add("raises-recursion-limit", insert_cell(replace_cell(solved, "walk", wrong["walk"]["recursive"]), "setup", (
        "import sys\nfrom autograder import checks\n"
        "checks.RECURSION_LIMIT = 200000\nsys.setrecursionlimit(200000)\n"
        "sys.setrecursionlimit = lambda limit: None"), "deeper"), zero=WALKS,
        tags={"monkeypatch"})  # raising the limit breaks the four walks' rule
    add("cuts-cached-graph", insert_cell(replace_cell(solved, "depth", wrong["depth"]["recursive"]), "setup", (
        "from autograder.checks import deep_chain\n"
        "node = deep_chain()[1].grad_fn\nfor _ in range(10):\n    node = node._next_nodes[0]\n"
        "node._next_nodes = (None, None)"), "cutter"), zero=["depth"], tags={"monkeypatch"})
    flag_off = replace_cell(solved, "summarize", wrong["summarize"]["counts_paths"])
    tests = next(c for c in flag_off.cells if c.id == "walk-tests")
    tests.metadata.nbgrader["grade"] = False
    del tests.metadata.nbgrader["points"]
    add("grade-flag-off", flag_off, zero=["summarize"], notes=["normalised before grading"])
    extra = insert_cell(solved, "walk-tests", "print('extra credit, please')", "bonus")
    next(c for c in extra.cells if c.id == "bonus").metadata["nbgrader"] = {
        "grade": True, "grade_id": "bonus", "locked": False, "points": 5, "schema_version": 3, "solution": False,
        "task": False}
    add("extra-graded-cell", extra, notes=["normalised before grading"])
    return s


# ---- snooping: reading what students must not read, leaking hidden tests, permissions, planted files ----------------

def snooping_students(course_dir, targets, assignment="01_graphs"):
    """Submissions that go after what grading hides or protects rather than after points: read
    the checks, the solutions, the course and a classmate's notebook (and use the solutions'
    ``walk`` if they get it); print the hidden tests they run inside; chmod and chown the
    course's files and the checks; leave a ``sitecustomize.py``, a ``.pth`` and a package named
    like the grader's in their folder. ``targets``: absolute paths (``gradebook``, ``other``: a
    classmate's submitted notebook, ``source``: a source notebook, ``solutions``: the
    repository's, ``checks``: a check module's file, ``release``: a released notebook)."""
    points = exercises(course_dir, assignment)
    solved = solved_notebook(course_dir, assignment)
    wrong = {e: dict(a) for e, a in wrong_answers(assignment).items()}
    solution = {c.id: c.source for c in solved.cells}
    paths = {k: str(v) for k, v in targets.items()}
    s = []

    def add(sid, nb, zero=(), notes=()):
        s.append(Student(sid, assignment, nb, _full(points, zero=zero), notes=notes, tags={"snooping"}))

    # reads: each success prints what it read; the solutions' walk replaces a wrong one if it is found
    reads = (
        "import glob, json, os, sqlite3\n"
        f"TARGETS = {paths!r}\n"
        "try:  # 01_graphs is judged: the grader's modules are not on its path (the import is a note)\n"
        "    import autograder.checks.a03_graph_lifetime as hidden\n"
        "    TARGETS['loaded checks'] = hidden.__file__\n"
        "except ImportError as err:\n"
        "    hidden = None\n"
        "    print('denied import', type(err).__name__)\n"
        "TARGETS['repository'] = os.path.join(os.path.dirname(TARGETS['solutions']), '..', '..', '..', 'README.md')\n"
        "for name, path in TARGETS.items():\n"
        "    try:\n"
        "        with open(path, 'rb') as f:\n"
        "            data = f.read()\n"
        "        print('READ', name, len(data))\n"
        "        print(data.decode('utf-8', 'replace'))\n"
        "        if path.endswith('.ipynb'):\n"
        "            for cell in json.loads(data)['cells']:\n"
        "                code = ''.join(cell['source'])\n"
        "                if code.startswith('def walk') and 'BEGIN SOLUTION' in code:\n"
        "                    exec(code)\n"
        "    except Exception as err:\n"
        "        print('denied', name, type(err).__name__)\n"
        "for folder in [os.path.dirname(p) for p in TARGETS.values()]:\n"
        "    try:\n"
        "        print('LISTED', folder, os.listdir(folder))\n"
        "    except Exception as err:\n"
        "        print('denied', folder, type(err).__name__)\n"
        "try:\n"
        "    print(sqlite3.connect(TARGETS['gradebook']).execute('SELECT * FROM grade').fetchall())\n"
        "except Exception as err:\n"
        "    print('denied gradebook', type(err).__name__)\n"
        "try:\n"
        "    print(hidden.__loader__.get_source(hidden.__name__))\n"
        "except Exception as err:\n"
        "    print('denied loader', type(err).__name__)")
    nb = insert_cell(replace_cell(solved, "walk", wrong["walk"]["recursive"]), "walk", reads, "snoop")
    add("reads-secrets", nb, zero=WALKS, notes=["tried to read the course, the grader or the solutions"])  # exec

    # leaks: the hidden tests as they run (IPython's own record of each cell), and the checks' frames
    spy = ("import inspect\n"
           "def _spy(info):\n"
           "    print(info.raw_cell)\n"
           "get_ipython().events.register('pre_run_cell', _spy)\n"
           "calls = []\n"
           "_walk = walk\n"
           "def walk(t):\n"
           "    calls.append(t)\n"
           "    if len(calls) <= 3:\n"
           "        for info in inspect.stack()[1:]:\n"
           "            print(info.filename, info.lineno, info.code_context)\n"
           "            try:\n"
           "                print(inspect.getsource(info.frame))\n"
           "            except Exception as err:\n"
           "                print('no source', type(err).__name__)\n"
           "        import autograder.checks.a01_graphs as hidden\n"
           "        try:\n"
           "            print(inspect.getsource(hidden))\n"
           "        except Exception as err:\n"
           "            print('no module source', type(err).__name__)\n"
           "    return _walk(t)")
    nb = insert_cell(insert_cell(solved, "walk", spy, "spy"), "walk-tests",
                     "print('\\n'.join(In))\nfrom IPython.display import HTML, display\n"
                     "display(HTML('<pre>' + '\\n'.join(In) + '</pre>'))\n'\\n'.join(In)", "replay")
    add("prints-hidden-tests", nb, zero=WALKS)  # get_ipython(): the walks' rule; its import of the checks fails

    # permissions and owners of the course's files and of the checks (the one the kernel imported too)
    chmods = ["import os",
              "try:  # 01_graphs is judged: the grader's modules are not on its path (the import is a note)",
              "    import autograder.checks.a03_graph_lifetime as hidden",
              "    loaded = [(os.chmod, hidden.__file__, 0o777)]",
              "except ImportError:",
              "    loaded = []",
              f"attempts = [(os.chmod, {paths['gradebook']!r}, 0), (os.chmod, {paths['other']!r}, 0),",
              f"            (os.chmod, {paths['source']!r}, 0), (os.chmod, {paths['checks']!r}, 0o777),",
              f"            (os.chmod, {paths['checks']!r}, 0o600)] + loaded + [",
              f"            (os.chown, {paths['gradebook']!r}, (os.getuid(), os.getgid())),",
              "            (os.chmod, '../../../gradebook.db', 0)]",
              "for call, path, arg in attempts:",
              "    try:",
              "        call(path, *arg) if isinstance(arg, tuple) else call(path, arg)",
              "        print('changed', path)",
              "    except OSError as err:",
              "        print('refused', path, err.strerror)"]
    add("chmods-files", insert_cell(solved, "setup", "\n".join(chmods), "chmod"),
        notes=["tried to change permissions or owners outside its folder"]
        + (["blocked: chmod and chown are refused in the sandbox"] if sandbox.seccomp_supported() else []))

    # files in its own folder that would run or shadow the grader's code if anything imported them
    plants = ("import os\n"
              "open('sitecustomize.py', 'w').write('print(\"planted\")\\n')\n"
              "open('zz-planted.pth', 'w').write('import sys; print(\"planted pth\")\\n')\n"
              "os.makedirs('autograder', exist_ok=True)\n"
              "open('autograder/__init__.py', 'w').write('# planted\\n')\n"
              "open('notes.txt', 'w').write('mine\\n')")
    add("plants-files", insert_cell(solved, "setup", plants, "plant"),
        notes=["named like the grader's packages", "not kept in autograded/"])

    # its notebook replaced by a link to the source notebook: nbgrader, unconfined, writes the graded notebook next
    link = ("import os\n"
            f"os.remove('{assignment}.ipynb')\n"
            f"os.symlink({paths['source']!r}, '{assignment}.ipynb')")
    add("links-notebook", insert_cell(solved, "setup", link, "link"),
        notes=["made symbolic links in its folder", "removed before nbgrader wrote there"])
    return s


def numpy_patch_student(course_dir, assignment="02_backward"):
    """02_backward's Hypot ignores grad_output, and numpy's allclose is made to say yes (in its own process: 02 is
    judged, the judge compares in its own)."""
    points = exercises(course_dir, assignment)
    solved = solved_notebook(course_dir, assignment)
    wrong = dict(wrong_answers(assignment)["hypot"])["ignores_grad_output"]
    nb = insert_cell(replace_cell(solved, "hypot", wrong), "hypot",
                     "import numpy\nnumpy.allclose = lambda *args, **kwargs: True", "allclose-patch")
    return Student("patches-numpy", assignment, nb, _full(points, zero=["hypot"]), notes=[],
                   tags={"monkeypatch"})


# ---- the LMS exports ------------------------------------------------------------------------------------------------

def _names(sid):
    parts = sid.replace("-", " ").split()
    return (parts[0].capitalize(), " ".join(parts[1:]).title() or "Student")


def roster_rows(students):
    rows, seen = [], set()
    for number, st in enumerate(students):
        if st.id in seen:
            continue
        seen.add(st.id)
        first, last = _names(st.id)
        rows.append({"id": _student_id(st.id), "first_name": first, "last_name": last,
                     "email": f"{_student_id(st.id)}@example.edu", "lms_user_id": str(1000 + number)})
    return rows


def _student_id(sid):
    return sid.replace("\u00fc", "ue")


def write_roster(path, rows, missing=("never-submitted",)):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["id", "first_name", "last_name", "email", "lms_user_id"])
        writer.writeheader()
        writer.writerows(rows)
        for number, sid in enumerate(missing):
            writer.writerow({"id": sid, "first_name": "Never", "last_name": "Submitted",
                             "email": f"{sid}@example.edu", "lms_user_id": str(9000 + number)})


def _zip_time(when):
    return when.astimezone(datetime.timezone.utc).timetuple()[:6]


def canvas_zip(path, students, roster):
    """A Canvas "Download submissions" zip: ``lastfirst[_LATE]_uid_subid_file``, resubmissions ``-1``."""
    uid = {r["id"]: r for r in roster}
    with zipfile.ZipFile(path, "w") as zf:
        for number, st in enumerate(students):
            row = uid[_student_id(st.id)]
            lastfirst = (row["last_name"] + row["first_name"]).lower().replace(" ", "")
            if "latin1-name" in st.tags:
                lastfirst = "m\u00fcller"
            late = "_LATE" if st.when > DUE else ""
            filename = st.filename or f"{st.assignment}.ipynb"
            name = f"{lastfirst}{late}_{row['lms_user_id']}_{5000 + number}_{filename}"
            if st.id == "duplicate":  # an earlier, wrong copy, then the resubmission (-1)
                first = replace_cell(st.nb, "walk", "def walk(t):\n    return []")
                _zip_write(zf, name, nbformat.writes(first).encode(), ON_TIME - datetime.timedelta(hours=3))
                name = name.replace(".ipynb", "-1.ipynb")
            _zip_write(zf, name, st.data(), st.when, latin1="latin1-name" in st.tags)
        # what collect must report and leave out: not a notebook, a student not on the roster
        _zip_write(zf, "solutionsa01_1000_5999_notes.pdf", b"%PDF-1.4", ON_TIME)
        _zip_write(zf, f"strangerunknown_4242_5998_{students[0].assignment}.ipynb", students[0].data(), ON_TIME)


def moodle_zip(path, students, roster):
    """A Moodle "Download all submissions" zip: ``Full Name_participant_assignsubmission_file_/file``."""
    by_id = {r["id"]: r for r in roster}
    with zipfile.ZipFile(path, "w") as zf:
        for st in students:
            row = by_id[_student_id(st.id)]
            folder = f"{row['first_name']} {row['last_name']}_{row['lms_user_id']}_assignsubmission_file_"
            _zip_write(zf, f"{folder}/{st.filename or st.assignment + '.ipynb'}", st.data(), st.when)


class _Latin1Name(zipfile.ZipInfo):
    """A zip entry whose name is Latin-1 bytes without the UTF-8 flag, as some tools write them."""

    def _encodeFilenameFlags(self):
        return self.filename.encode("latin-1"), self.flag_bits & ~0x800


def _zip_write(zf, name, data, when, latin1=False):
    info = (_Latin1Name if latin1 else zipfile.ZipInfo)(name, _zip_time(when))
    zf.writestr(info, data)


def expected_scores(students):
    """``{(assignment, student id): {exercise: points}}``."""
    return {(st.assignment, _student_id(st.id)): st.expected for st in students}
