"""``export``: the grades as CSV, and the table ``report`` draws from.

One row per student in the gradebook: their names, the total, a column per assignment (its
score after late penalties and manual grades, as nbgrader computes it; 0 when nothing was
submitted) and a column per exercise, ``<assignment>:<exercise>`` (empty when nothing was
submitted). The second row, ``(max)``, holds the maximum of every column.
"""
import csv


def _exercise(name):
    return name[:-len("-tests")] if name.endswith("-tests") else name


def grade_table(course):
    """Everything the CSV and the report need, read once from the gradebook:
    ``{"assignments": {a: {"max": m, "exercises": {e: max}, "duedate": d}}, "students": [...],
    "scores": {(student, a): {"score", "exercises": {e: score}, "late_seconds", "penalty"}}}``."""
    from nbgrader.api import Gradebook
    table = {"assignments": {}, "students": [], "scores": {}}
    with Gradebook(course.db_url, course.course_id) as gb:
        for assignment in sorted(gb.assignments, key=lambda a: a.name):
            exercises = {}
            for nb in sorted(assignment.notebooks, key=lambda n: n.name):
                for cell in nb.grade_cells:
                    exercises[_exercise(cell.name)] = cell.max_score
            order = _cell_order(course, assignment.name)
            exercises = dict(sorted(exercises.items(), key=lambda kv: order.get(kv[0], len(order))))
            table["assignments"][assignment.name] = {"max": assignment.max_score, "exercises": exercises,
                                                     "duedate": assignment.duedate}
            for sub in assignment.submissions:
                scores = {}
                for nb in sub.notebooks:
                    for grade in nb.grades:
                        scores[_exercise(grade.name)] = None if _not_graded(grade) else grade.score
                table["scores"][(sub.student_id, assignment.name)] = {
                    "score": sub.score, "exercises": scores, "late_seconds": sub.total_seconds_late,
                    "penalty": sub.late_submission_penalty}
        for student in sorted(gb.students, key=lambda s: s.id):
            table["students"].append({"id": student.id, "first_name": student.first_name or "",
                                      "last_name": student.last_name or "", "email": student.email or ""})
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
                order.setdefault(_exercise(meta["grade_id"]), len(order))
    return order


def export(course, output=None):
    """Write the grades CSV; returns its path."""
    table = grade_table(course)
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


def _num(x):
    """A score as the CSV writes it; None (not graded: a GPU-only exercise without a GPU) is blank."""
    return "" if x is None else f"{x:g}"
