"""An instructor's term with Canvas, end to end, on a class of six: the files Canvas gives (its
gradebook export as the roster, its "Download submissions" zip) in, the CSV Canvas's "Import"
takes out, and every decision and mistake of a term in between.

The Canvas formats are built here as Canvas documents them: the gradebook export's first columns
``Student, ID, SIS User ID, SIS Login ID, Section``, one column per assignment named
``<name> (<assignment id>)``, a ``Points Possible`` row (indented, read-only columns marked
``(read only)``) and Canvas's ``Student, Test`` row; the submissions zip's file names
``<lastfirst>[_LATE]_<user id>_<submission id>_<file name>``. ``export --canvas`` is read back with
this file's own parser of that format, not the autograder's.

Four notebooks (two solved, two untouched) are graded once; everything else is bookkeeping.
"""
import contextlib
import csv
import datetime
import io
import json
import subprocess
import sys
import zipfile

import nbformat
import pytest

import synthetic_classes
from autograder import build, term
from autograder.__main__ import main

DUE = datetime.datetime(2025, 1, 15, 23, 59, tzinfo=datetime.timezone.utc)  # passed: "missing" applies
# Canvas's gradebook export: the class, Canvas's test student, a student who never submits
CANVAS_STUDENTS = [  # Student, ID, SIS User ID, SIS Login ID, Section
    ("Liddell, Alice", "2001", "S100", "aliddell", "CS 101 A"),
    ("Builder, Bob", "2002", "S101", "bbuilder", "CS 101 A"),
    ("Carroll, Carol", "2003", "S102", "ccarroll", "CS 101 B"),
    ("Dodo, Dave", "2004", "S103", "ddodo", "CS 101 B"),
    ("Eaglet, Eve", "2005", "S104", "eeaglet", "CS 101 B"),
    ("Frog, Frank", "2006", "S105", "ffrog", "CS 101 A"),
]
ASSIGNMENT_IDS = {"01_graphs": "7001", "02_backward": "7002"}


def run(course_dir, *args):
    """The command line in this process: ``(exit code, what it printed)``; SystemExit's message is printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            code = main(["--course", str(course_dir), *map(str, args)])
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
            print(stop.code if not isinstance(stop.code, int) else "")
    return code, out.getvalue()


def ok(course_dir, *args):
    code, text = run(course_dir, *args)
    assert code == 0, text
    return text


def canvas_gradebook_export(path):
    """Canvas > Grades > Export, as Canvas writes it."""
    header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"] + [
        f"{a} ({i})" for a, i in ASSIGNMENT_IDS.items()] + ["Current Points", "Final Points", "Current Score",
                                                             "Final Score"]
    with open(path, "w", newline="", encoding="utf-8-sig") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerow(["    Points Possible", "", "", "", "", "12.00", "15.00"] + ["(read only)"] * 4)
        for student in CANVAS_STUDENTS:
            writer.writerow(list(student) + ["", "", "0.00", "0.00", "", ""])
        writer.writerow(["Student, Test", "2099", "", "5f1c2e3d4b", "", "", "", "0.00", "0.00", "", ""])


def canvas_submissions_zip(path, files):
    """Canvas > Assignment > Download Submissions: ``{(student index, late tag, zip time): notebook bytes}``."""
    with zipfile.ZipFile(path, "w") as zf:
        for number, ((index, late, when, filename), data) in enumerate(files.items()):
            name, uid = CANVAS_STUDENTS[index][0], CANVAS_STUDENTS[index][1]
            lastfirst = name.replace(", ", "").replace(" ", "").lower()
            info = zipfile.ZipInfo(f"{lastfirst}{'_LATE' if late else ''}_{uid}_{90000 + number}_{filename}",
                                   when.timetuple()[:6])
            zf.writestr(info, data)


def parse_canvas_import(path):
    """Canvas's import format, read as Canvas reads it: the identity columns, the assignment
    columns ``name (id)``, the ``Points Possible`` row, then a row per student keyed by ``ID``."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    assert header[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"], header
    assignments = header[5:]
    assert all(col.endswith(")") and col.rsplit(" (", 1)[1][:-1].isdigit() for col in assignments), assignments
    assert rows[1][0].strip() == "Points Possible", rows[1]
    possible = dict(zip(assignments, rows[1][5:]))
    students = {row[1]: dict(zip(header, row)) for row in rows[2:]}
    return assignments, possible, students


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    base = tmp_path_factory.mktemp("canvas")
    course_dir = synthetic_classes.course_copy(base, ["01_graphs", "02_backward"])
    code, text = run(course_dir, "release", "--no-zip", "--dest", base / "student")
    assert code == 2 and "01_graphs, 02_backward" in text and "--all" in text, text  # nothing released
    assert not (course_dir / "release").exists()
    code, text = run(course_dir, "release", "01_graphs", "--no-zip", "--dest", base / "student",
                     "--due", "02_backwards=2030-01-01")
    assert code != 0 and "02_backwards" in text, text
    ok(course_dir, "release", "01_graphs", "--no-zip", "--dest", base / "student", "--due",
       f"01_graphs={DUE.isoformat()}")
    canvas_gradebook_export(base / "canvas-grades.csv")
    solved = nbformat.writes(synthetic_classes.solved_notebook(course_dir, "01_graphs")).encode()
    untouched = nbformat.writes(synthetic_classes.released_notebook(course_dir, "01_graphs")).encode()
    day = datetime.timedelta(days=1)
    canvas_submissions_zip(base / "submissions-01.zip", {
        (0, False, DUE - day, "01_graphs.ipynb"): solved,  # Alice: on time
        (1, True, DUE + 1.5 * day, "01_graphs.ipynb"): solved,  # Bob: LATE, 2 started days
        (3, True, DUE + 2 * day, "01_graphs-1.ipynb"): untouched,  # Dave: LATE, but has a 3-day extension
        (4, False, DUE + 5 * day, "01_graphs.ipynb"): untouched,  # Eve: on time; the zip's times are wrong
    })
    return {"dir": course_dir, "base": base, "solved": solved}


@pytest.mark.slow
def test_a_term_with_canvas(course):
    course_dir, base = course["dir"], course["base"]
    gradebook = base / "canvas-grades.csv"
    (base / "other.csv").write_text("name,mail\nAlice,a@x\n")
    code, text = run(course_dir, "collect", base / "submissions-01.zip", "--roster", base / "other.csv")
    assert code != 0 and "name, mail" in text and "SIS Login ID" in text and "lms_user_id" in text, text

    # policy and decisions before grading
    assert "10% of the score per started day" in ok(course_dir, "late-policy", "--percent-per-day", 10,
                                                    "--zero-after-days", 7)
    dry = ok(course_dir, "collect", base / "submissions-01.zip", "--roster", gradebook, "--assignment", "01_graphs",
             "--dry-run")
    assert dry.startswith("dry run, nothing changed: 4 would place"), dry
    assert not (course_dir / "submitted").exists() and not term.load(_course(course_dir))["submissions"]
    text = ok(course_dir, "collect", base / "submissions-01.zip", "--roster", gradebook, "--assignment", "01_graphs")
    assert "4 placed" in text, text
    lines = {line.split(" -> ")[1].split(":")[0]: line for line in text.splitlines() if " -> " in line}
    assert "late by 36.0 h (Canvas's LATE tag" in lines["bbuilder/01_graphs"]
    assert "on time (no LATE tag from Canvas), although the zip's timestamps say" in lines["eeaglet/01_graphs"]
    assert "aliddell/01_graphs" not in lines  # on time, nothing to say
    assert not (course_dir / "submitted" / "canvas-2099").exists(), "Canvas's test student is not a student"
    ok(course_dir, "extend", "ddodo", "01_graphs", "--days", 3, "--reason", "medical")
    ok(course_dir, "excuse", "ccarroll", "01_graphs", "--reason", "joined late")
    code, text = run(course_dir, "excuse", "nobody", "01_graphs", "--reason", "x")
    assert code != 0 and "unknown student 'nobody'" in text

    graded = subprocess.run([sys.executable, "-m", "autograder", "--course", str(course_dir), "grade", "--workers", "2"],
                            capture_output=True, text=True, env=build.nbgrader_env(), timeout=900)
    assert graded.returncode == 0 and "graded 4 submission(s)" in graded.stdout, graded.stdout + graded.stderr[-3000:]
    assert "walk: 1/2" in ok(course_dir, "adjust", "aliddell", "01_graphs", "walk", 1, "--reason", "copied walk")
    code, text = run(course_dir, "adjust", "aliddell", "01_graphs", "wlak", 1, "--reason", "typo")
    assert code != 0 and "no exercise 'wlak'" in text and "walk" in text

    # a mistake refused: the 02_backward zip collected as 01_graphs
    canvas_submissions_zip(base / "submissions-02.zip", {(0, False, DUE, "02_backward.ipynb"): b"{}",
                                                         (1, False, DUE, "02_backward-2.ipynb"): b"{}"})
    before = (course_dir / "submitted" / "aliddell" / "01_graphs" / "01_graphs.ipynb").read_bytes()
    code, text = run(course_dir, "collect", base / "submissions-02.zip", "--assignment", "01_graphs")
    assert code != 0 and "2 file(s) are named for 02_backward, not --assignment 01_graphs" in text, text
    assert "--force" in text and "nothing collected" in text
    assert (course_dir / "submitted" / "aliddell" / "01_graphs" / "01_graphs.ipynb").read_bytes() == before

    # a mistake undone: a wrong resubmission replaces Alice's graded one, then undo-collect
    wrong = nbformat.writes(synthetic_classes.replace_cell(nbformat.reads(course["solved"], as_version=4), "walk",
                                                           "def walk(t):\n    return []")).encode()
    canvas_submissions_zip(base / "resubmission.zip", {(0, False, DUE - 0.5 * datetime.timedelta(days=1),
                                                        "01_graphs.ipynb"): wrong})
    gradebook_before = (course_dir / "gradebook.db").read_bytes()
    record_before = (course_dir / "grading" / "records" / "01_graphs" / "aliddell.json").read_text()
    text = ok(course_dir, "collect", base / "resubmission.zip", "--assignment", "01_graphs")
    assert "replaces the submission graded 12/12 (`autograder undo-collect` restores it)" in text, text
    assert (course_dir / "submitted" / "aliddell" / "01_graphs" / "01_graphs.ipynb").read_bytes() == wrong
    text = ok(course_dir, "undo-collect")
    assert "aliddell/01_graphs: previous submission restored" in text, text
    assert (course_dir / "submitted" / "aliddell" / "01_graphs" / "01_graphs.ipynb").read_bytes() == before
    assert (course_dir / "gradebook.db").read_bytes() == gradebook_before
    assert (course_dir / "grading" / "records" / "01_graphs" / "aliddell.json").read_text() == record_before
    assert any(p.read_bytes() == wrong for p in (course_dir / "grading" / "collect" / "undone").rglob("*.ipynb")), \
        "what was undone is kept, not deleted"

    # grades out, read back as Canvas reads them
    text = ok(course_dir, "export", "--canvas", gradebook)
    assert "ffrog" not in text  # every gradebook student is in Canvas's export
    columns, possible, students = parse_canvas_import(course_dir / "reports" / "canvas-import.csv")
    assert columns == ["01_graphs (7001)"], columns
    assert possible == {"01_graphs (7001)": "12"}
    grades = {s["SIS Login ID"]: s["01_graphs (7001)"] for s in students.values()}
    assert grades == {"aliddell": "11", "bbuilder": "9.6", "ccarroll": "EX", "ddodo": "0", "eeaglet": "0",
                      "ffrog": "", "5f1c2e3d4b": ""}, grades
    assert students["2003"]["Student"] == "Carroll, Carol" and students["2003"]["Section"] == "CS 101 B"
    with open(course_dir / "reports" / "grades-long.csv", newline="") as f:
        long = {(r["student"], r["exercise"]): r for r in csv.DictReader(f) if r["assignment"] == "01_graphs"}
    assert long[("aliddell", "walk")]["points"] == "1" and long[("aliddell", "walk")]["adjusted"] == "copied walk"
    assert long[("bbuilder", "walk")]["late_days"] == "2" and long[("bbuilder", "walk")]["penalty"] == "2.4"
    assert long[("ddodo", "walk")]["late_days"] == "0" and long[("ccarroll", "walk")]["excused"] == "yes"

    # feedback back in bulk, named as Canvas named each submission (`feedback` itself is tested in
    # test_autograder.py; two pages stand in for it here)
    for student in ("aliddell", "bbuilder"):
        (course_dir / "feedback" / student / "01_graphs").mkdir(parents=True)
        (course_dir / "feedback" / student / "01_graphs" / "01_graphs.html").write_text(f"<p>{student}</p>")
    text = ok(course_dir, "feedback-zip", "01_graphs")
    with zipfile.ZipFile(course_dir / "reports" / "canvas-feedback-01_graphs.zip") as zf:
        names = {name: zf.read(name).decode() for name in zf.namelist()}
    with zipfile.ZipFile(base / "submissions-01.zip") as zf:
        downloaded = zf.namelist()
    assert names == {"liddellalice_2001_90000_01_graphs-feedback.html": "<p>aliddell</p>",
                     "builderbob_LATE_2002_90001_01_graphs-feedback.html": "<p>bbuilder</p>"}, names
    assert all(n.replace("-feedback.html", ".ipynb") in downloaded for n in names), "Canvas's own prefixes"
    ok(course_dir, "feedback", "01_graphs", "--student", "bbuilder")  # the real page: the penalty export applied
    page = (course_dir / "feedback" / "bbuilder" / "01_graphs" / "01_graphs.html").read_text()
    assert "2 started day(s) after the due date. Late policy: 10% of the score per started day late; 0 points " \
           "when more than 7 day(s) late. Points: 12 before the penalty, 9.6 after (&minus;2.4)." in page

    text = ok(course_dir, "similarity", "01_graphs")  # Alice and Bob both handed in the solutions
    assert text.splitlines()[0].split() == ["100%", "aliddell", "bbuilder"], text
    assert "no code of their own: ddodo, eeaglet" in text, text
    assert "aliddell and bbuilder: 100%" in (course_dir / "reports" / "similarity.html").read_text()

    ok(course_dir, "report")
    page = (course_dir / "reports" / "report.html").read_text()
    missing = page.split("<h2>Missing submissions</h2>")[1].split("<h2>")[0]
    assert "<td>ffrog</td>" in missing and "ccarroll" not in missing, missing
    decisions = page.split("<h2>Overrides, extensions, excused</h2>")[1]
    for text in ("aliddell/01_graphs/walk", "copied walk", "ddodo/01_graphs", "medical", "joined late",
                 "10% of the score per started day late"):
        assert text in decisions, text


def _course(course_dir):
    from autograder.course import Course
    return Course(course_dir)


def test_the_late_penalty_rule():
    policy = {"percent_per_day": 10, "zero_after_days": 3}
    assert term.penalty_fraction(policy, 0) == 0
    assert term.penalty_fraction(policy, 60) == pytest.approx(0.1)  # a started day counts
    assert term.penalty_fraction(policy, 86400 * 2.5) == pytest.approx(0.3)
    assert term.penalty_fraction(policy, 86400 * 3 + 1) == 1.0
    assert term.penalty_fraction({"percent_per_day": 0, "zero_after_days": None}, 86400 * 30) == 0
    state = json.loads(json.dumps(term.EMPTY))
    state["policy"] = policy
    state["submissions"]["s/a"] = {"submitted_at": (DUE + datetime.timedelta(hours=30)).isoformat(), "source": "x"}
    assert term.lateness(state, "s", "a", DUE).days == 2
    state["extensions"]["s/a"] = {"days": 1.5, "reason": ""}
    assert term.lateness(state, "s", "a", DUE).seconds == 0
    state["submissions"]["s/a"]["on_time_by_lms"] = True
    del state["extensions"]["s/a"]
    assert term.lateness(state, "s", "a", DUE).penalty_fraction == 0, "Canvas said on time"


def test_a_late_students_feedback_says_the_penalty(tmp_path):
    """The paragraph ``feedback`` puts under the score of a late submission: days late, the rule, the points
    before and after: the numbers ``export`` applies (``grade_table``'s)."""
    from autograder import feedback
    state = json.loads(json.dumps(term.EMPTY))
    state["policy"] = {"percent_per_day": 10, "zero_after_days": 7}
    state["extensions"]["bob/01_graphs"] = {"days": 1, "reason": "ill"}
    late = {"score": 9.6, "penalty": 2.4, "late_days": 2, "late_seconds": 1.5 * 86400}
    note = feedback.late_note(late, state, "bob", "01_graphs")
    assert ("submitted 2 started day(s) after the due date (after your 1-day extension). Late policy: 10% of the "
            "score per started day late; 0 points when more than 7 day(s) late. Points: 12 before the penalty, 9.6 "
            "after (&minus;2.4).") in note
    page = tmp_path / "01_graphs.html"
    page.write_text("<body><h4>01_graphs (Score: 12.0 / 12.0)</h4><ul></ul><h4>other</h4></body>")
    feedback.tidy(page, "01_graphs", note)
    feedback.tidy(page, "01_graphs", note)  # a second feedback run adds nothing
    assert page.read_text() == f"<body><h4>01_graphs (Score: 12.0 / 12.0)</h4>\n{note}<ul></ul><h4>other</h4></body>"
    state["policy"] = {"percent_per_day": 0, "zero_after_days": None}
    assert "Late policy: no late penalty. Points: 12 (no penalty)." in feedback.late_note(
        dict(late, score=12, penalty=0), state, "eve", "01_graphs")


def test_disguised_copies_rank_above_every_pair_of_different_solutions():
    """Issue 28's criterion on a small class (``benchmarks/similarity_class.py`` measures 40 + 5): 12 students
    built from different implementations of each exercise, two sharing at most one exercise's code, and 3 copies
    renamed, reformatted and reordered: the 3 copied pairs rank first, the lowest above the highest of the rest."""
    sys.path.insert(0, str(build.ROOT / "benchmarks"))
    try:
        import similarity_class
    finally:
        sys.path.remove(str(build.ROOT / "benchmarks"))
    r = similarity_class.measure(students=12, copies=3, seed=0, identical=0)
    assert r["students"] == 15 and max(r["shared"]) <= 1, r["shared"]
    assert r["copy_ranks"] == [1, 2, 3] and r["copy_scores"][0] > r["independent"][-1], r


def test_similarity_puts_identical_and_disguised_copies_first():
    """Six identical submissions, a copy with names, comments, layout and order changed, two
    different solutions, and one with nothing of its own beyond the release's stub."""
    from autograder.similarity import rank
    walk = ("def walk(t):\n    seen, order, stack = set(), [], [t.grad_fn]\n    while stack:\n"
            "        node = stack.pop()\n        if node is None or node in seen:\n            continue\n"
            "        seen.add(node)\n        order.append(node)\n"
            "        stack.extend(n for n, _ in node.next_functions)\n    return order\n")
    depth = ("def depth(t):\n    best, todo = 0, [(t.grad_fn, 1)]\n    while todo:\n        node, d = todo.pop()\n"
             "        if node is not None:\n            best = max(best, d)\n"
             "            todo.extend((n, d + 1) for n, _ in node.next_functions)\n    return best\n")
    disguised = (depth.replace("best", "deepest").replace("todo", "pending").replace("    ", "  ") + "\n# mine\n"
                 + walk.replace("seen", "visited").replace("order", "found"))
    other = ("def walk(root):\n    out = []\n    def visit(f):\n        if f is None or f in out:\n            return\n"
             "        out.append(f)\n        for g, _ in f.next_functions:\n            visit(g)\n"
             "    visit(root.grad_fn)\n    return out\n")
    stub = '# YOUR CODE HERE\nraise NotImplementedError("Exercise 01.walk")'
    codes = {f"same{i}": walk + "\n" + depth for i in range(6)}
    codes.update(original=depth + walk + "\nprint(len(walk))", disguised=disguised, other=other, nothing=stub)
    pairs, empty = rank(codes, released=stub)
    assert empty == ["nothing"]
    top = [frozenset((a, b)) for _, a, b, _ in pairs[:16]]
    assert set(top[:15]) == {frozenset((f"same{i}", f"same{j}")) for i in range(6) for j in range(i + 1, 6)}
    score = {frozenset((a, b)): s for s, a, b, _ in pairs}
    assert score[frozenset(("disguised", "original"))] > 0.9
    assert max(s for k, s in score.items() if "other" in k) < 0.3
