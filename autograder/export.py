"""``export``: the grades as CSV (wide, long, and Canvas's import format), and the table ``report`` draws from.

Scores are final: nbgrader's (manual grades included), each exercise overridden by ``adjust``,
less the late penalty of the course's policy (``autograder/term.py``) after any extension.

- ``reports/grades.csv``: a row per student in the gradebook: names, the total, a column per
  assignment (0 when nothing was submitted) and per exercise, ``<assignment>:<exercise>`` (empty
  when nothing was submitted). The second row, ``(max)``, holds the maximum of every column.
- ``reports/grades-long.csv``: a row per student, assignment and exercise, for any other LMS:
  points, max, late days, penalty, excused, the override's reason.
- ``reports/canvas-import.csv`` (``--canvas GRADEBOOK_EXPORT.csv``): what Canvas's Grades > Import
  takes as is: Canvas's ``Student,ID,SIS User ID,SIS Login ID,Section`` of every row of the export,
  one column per assignment under the name the export has for it (``01_graphs (1234)``), Canvas's
  ``Points Possible`` row, ``EX`` where excused, empty where nothing was submitted (Canvas leaves
  an empty cell unchanged). A student is matched on the Canvas ``ID`` collect's roster stored
  (else the SIS Login ID, SIS User ID, or name).
"""
import csv
import re

from . import term

CANVAS_IDS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_COLUMN = re.compile(r"^(?P<name>.*?)\s*\((?P<id>\d+)\)$")  # "01_graphs (1234)"


def exercise_name(name):
    return name[:-len("-tests")] if name.endswith("-tests") else name


def grade_table(course):
    """Everything the CSV and the report need, read once from the gradebook:
    ``{"assignments": {a: {"max": m, "exercises": {e: max}, "duedate": d}}, "students": [...],
    "scores": {(student, a): {"score", "exercises": {e: score}, "adjusted": {e: reason}, "late_seconds",
    "late_source", "late_days", "penalty" (points), "excused"}}, "term": the term's state}``."""
    import datetime
    from nbgrader.api import Gradebook
    state = term.load(course)
    table = {"assignments": {}, "students": [], "scores": {}, "term": state}
    with Gradebook(course.db_url, course.course_id) as gb:
        for assignment in sorted(gb.assignments, key=lambda a: a.name):
            exercises = {}
            for nb in sorted(assignment.notebooks, key=lambda n: n.name):
                for cell in nb.grade_cells:
                    exercises[exercise_name(cell.name)] = cell.max_score
            order = _cell_order(course, assignment.name)
            exercises = dict(sorted(exercises.items(), key=lambda kv: order.get(kv[0], len(order))))
            table["assignments"][assignment.name] = {"max": assignment.max_score, "exercises": exercises,
                                                     "duedate": assignment.duedate}
            due = assignment.duedate
            due = due.replace(tzinfo=datetime.timezone.utc) if due is not None and due.tzinfo is None else due
            for sub in assignment.submissions:
                scores, adjusted = {}, {}
                for nb in sub.notebooks:
                    for grade in nb.grades:
                        scores[exercise_name(grade.name)] = None if _not_graded(grade) else grade.score
                for exercise in scores:
                    override = state["adjustments"].get(f"{sub.student_id}/{assignment.name}/{exercise}")
                    if override:
                        adjusted[exercise] = override["reason"]
                        scores[exercise] = override["points"]
                raw = sub.score + sum(scores[e] for e in adjusted) - sum(
                    g.score for nb in sub.notebooks for g in nb.grades if exercise_name(g.name) in adjusted)
                late = term.lateness(state, sub.student_id, assignment.name, due)
                table["scores"][(sub.student_id, assignment.name)] = {
                    "score": raw * (1 - late.penalty_fraction), "exercises": scores, "adjusted": adjusted,
                    "late_seconds": late.seconds, "late_source": late.source, "late_days": late.days,
                    "penalty": raw * late.penalty_fraction,
                    "excused": term.key(sub.student_id, assignment.name) in state["excused"]}
        for student in sorted(gb.students, key=lambda s: s.id):
            table["students"].append({"id": student.id, "first_name": student.first_name or "",
                                      "last_name": student.last_name or "", "email": student.email or "",
                                      "lms_user_id": student.lms_user_id or ""})
    return table


def _not_graded(grade):
    """Left blank by the judge (``judge.NotGraded``) and not graded by hand since: blank, not 0."""
    return grade.auto_score is None and grade.manual_score is None and grade.needs_manual_grade


def _cell_order(course, assignment):
    """Grade cells in notebook order (the gradebook keeps no order), from the source notebook."""
    import nbformat
    order = {}
    for path in sorted((course.source / assignment).glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade"):
                order.setdefault(exercise_name(meta["grade_id"]), len(order))
    return order


def export(course, output=None, canvas=None):
    """Write the grades CSVs (and Canvas's, given its gradebook export); returns their paths."""
    table = grade_table(course)
    paths = [_wide(course, table, output), _long(course, table)]
    if canvas:
        paths.append(_canvas(course, table, canvas))
    return paths


def _wide(course, table, output):
    output = output or course.reports / "grades.csv"
    course.reports.mkdir(parents=True, exist_ok=True)
    assignments = table["assignments"]
    header = ["student_id", "first_name", "last_name", "email", "total"] + list(assignments) + [
        f"{a}:{e}" for a, info in assignments.items() for e in info["exercises"]]
    maximum = ["(max)", "", "", "", _num(sum(a["max"] for a in assignments.values()))]
    maximum += [_num(info["max"]) for info in assignments.values()]
    maximum += [_num(m) for info in assignments.values() for m in info["exercises"].values()]
    with open(output, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerow(maximum)
        for student in table["students"]:
            subs = {a: table["scores"].get((student["id"], a)) for a in assignments}
            row = [student["id"], student["first_name"], student["last_name"], student["email"],
                   _num(sum(s["score"] for s in subs.values() if s))]
            row += [_num(s["score"]) if s else "0" for s in subs.values()]
            for a, info in assignments.items():
                row += [_num(subs[a]["exercises"].get(e, 0)) if subs[a] else "" for e in info["exercises"]]
            writer.writerow(row)
    return output


def _long(course, table):
    """A row per student, assignment and exercise: what any gradebook can import."""
    output = course.reports / "grades-long.csv"
    with open(output, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "assignment", "exercise", "points", "max", "late_days", "penalty", "excused",
                         "adjusted"])
        for student in table["students"]:
            for a, info in table["assignments"].items():
                sub = table["scores"].get((student["id"], a))
                excused = term.key(student["id"], a) in table["term"]["excused"]
                for e, top in info["exercises"].items():
                    points = _num(sub["exercises"].get(e, 0)) if sub else ""
                    writer.writerow([student["id"], a, e, points, _num(top), sub["late_days"] if sub else "",
                                     _num(sub["penalty"]) if sub else "", "yes" if excused else "",
                                     sub["adjusted"].get(e, "") if sub else ""])
    return output


def read_canvas_gradebook(path):
    """Canvas's gradebook export: ``(columns, points possible {column: text}, student rows)``."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    if not rows or not {"Student", "ID"} <= {c.strip() for c in rows[0]}:
        raise SystemExit(f"{path}: not a Canvas gradebook export (its first row must name Student, ID, SIS User ID, "
                         f"SIS Login ID, Section and the assignments: Canvas > Grades > Export)")
    columns = [c.strip() for c in rows[0]]
    records = [dict(zip(columns, (v.strip() for v in row))) for row in rows[1:] if row]
    possible = next((r for r in records if r.get("Student") == "Points Possible"), {})
    return columns, possible, [r for r in records if r.get("ID", "").isdigit()]


def _canvas(course, table, export_path):
    columns, _, rows = read_canvas_gradebook(export_path)
    assignments = {c: CANVAS_COLUMN.match(c)["name"] for c in columns if CANVAS_COLUMN.match(c)}
    column_of = {}
    for a in table["assignments"]:
        found = [c for c, name in assignments.items() if _fold(name) == _fold(a)]
        if len(found) != 1:
            raise SystemExit(f"{export_path}: {'no' if not found else 'more than one'} Canvas assignment named {a!r} "
                             f"(its assignments: {', '.join(assignments) or 'none'}). Create it in Canvas with that "
                             f"name, export the gradebook again, and run export --canvas with the new file.")
        column_of[a] = found[0]
    ours = _match(table, rows)
    output = course.reports / "canvas-import.csv"
    with open(output, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(list(CANVAS_IDS) + list(column_of.values()))
        writer.writerow(["Points Possible", "", "", "", ""] + [_num(table["assignments"][a]["max"]) for a in column_of])
        for row in rows:
            student = ours.get(row["ID"])
            cells = [row.get(c, "") for c in CANVAS_IDS]
            for a in column_of:
                cells.append(_canvas_cell(table, student, a))
            writer.writerow(cells)
    unmatched = sorted({s["id"] for s in table["students"]} - set(ours.values()))
    if unmatched:
        print(f"not in {export_path} (not exported to Canvas): {', '.join(unmatched)}")
    return output


def _canvas_cell(table, student, assignment):
    if student is None:
        return ""
    if term.key(student, assignment) in table["term"]["excused"]:
        return "EX"
    sub = table["scores"].get((student, assignment))
    return _num(round(sub["score"], 2)) if sub else ""


def _match(table, rows):
    """``{Canvas ID: student id}``: by the Canvas ID the roster gave, else SIS ids, else the name."""
    lms = table["term"]["lms"]
    keys = {}
    for s in table["students"]:
        ids = lms.get(s["id"], {})
        for k in (("ID", s["lms_user_id"]), ("ID", ids.get("ID")), ("SIS Login ID", ids.get("SIS Login ID")),
                  ("SIS Login ID", s["id"]), ("SIS User ID", ids.get("SIS User ID")),
                  ("Student", _fold(f"{s['last_name']}{s['first_name']}"))):
            if k[1]:
                keys.setdefault(k, s["id"])
    out = {}
    for row in rows:
        for column in ("ID", "SIS Login ID", "SIS User ID", "Student"):
            value = _fold(row.get(column, "")) if column == "Student" else row.get(column, "")
            if (column, value) in keys:
                out[row["ID"]] = keys[(column, value)]
                break
    return out


def feedback_zip(course, assignment):
    """``reports/canvas-feedback-<assignment>.zip``: each student's feedback HTML named as Canvas named
    their submission in "Download Submissions" (``lastfirst_<userid>_<submissionid>_feedback.html``), the
    layout Canvas's "Re-Upload Submissions" takes back and attaches to each submission as a comment.
    Returns ``(path, students left out)``: those whose submission did not come from a Canvas zip."""
    import zipfile
    state = term.load(course)
    folder = course.feedback
    pages = sorted(folder.glob(f"*/{assignment}/*.html")) if folder.is_dir() else []
    if not pages:
        raise SystemExit(f"no feedback for {assignment} in {folder}: run `autograder feedback {assignment}` first")
    output = course.reports / f"canvas-feedback-{assignment}.zip"
    output.parent.mkdir(parents=True, exist_ok=True)
    left_out = []
    with zipfile.ZipFile(output, "w", zipfile.ZIP_DEFLATED) as zf:
        for page in pages:
            student = page.parent.parent.name
            prefix = state["submissions"].get(term.key(student, assignment), {}).get("canvas_prefix")
            if prefix:
                zf.write(page, f"{prefix}{page.stem}-feedback.html")
            else:
                left_out.append(student)
    return output, left_out


def _fold(text):
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _num(x):
    """A score as the CSV writes it; None (not graded: a GPU-only exercise without a GPU) is blank."""
    return "" if x is None else f"{x:g}"
