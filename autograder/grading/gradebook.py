"""The gradebook: scratch copies for workers, merging their results back, comparing two gradebooks.

nbgrader's gradebook (any SQLAlchemy URL; SQLite by default) is the record. Workers never open
it: the parent copies what one submission's autograde reads (the assignments' cells, the
student, the existing submission with any manual grades) into a scratch SQLite file, the
worker runs real ``nbgrader autograde`` against that, and the parent writes back what autograde
writes, through nbgrader's own API: the student row, the submission and its timestamp, each
grade's ``auto_score`` and ``needs_manual_grade``, each comment's ``auto_comment``, each
notebook's late penalty. Manual scores, manual comments, extra credit, flags and extensions are
never written, so they survive any regrade.
"""
import datetime
import json

from sqlalchemy import create_engine, insert, select

STRUCTURE = ("course", "assignment", "notebook", "base_cell", "grade_cells", "solution_cells", "task_cells",
             "source_cell")


def _tables():
    from nbgrader.api import Base
    return Base.metadata.tables


def _jsonable(row):
    return {k: (v.isoformat() if isinstance(v, datetime.datetime) else v) for k, v in row.items()}


def _from_json(table, row):
    out = {}
    for key, value in row.items():
        if value is not None and table.c[key].type.python_type is datetime.datetime:
            value = datetime.datetime.fromisoformat(value)
        out[key] = value
    return out


def read_structure(db_url):
    """Every row of the tables that describe the assignments (what a worker's scratch gradebook needs)."""
    tables, engine = _tables(), create_engine(db_url)
    try:
        with engine.connect() as conn:
            return {name: [_jsonable(dict(r._mapping)) for r in conn.execute(select(tables[name]))]
                    for name in STRUCTURE}
    finally:
        engine.dispose()


def read_submission_rows(db_url, pairs):
    """``{(assignment, student): rows}``: the student row and the existing submission's rows
    (submitted assignment, notebooks, grades, comments) for each pair, in one pass."""
    tables, engine = _tables(), create_engine(db_url)
    t = {name: tables[name] for name in ("student", "assignment", "submitted_assignment", "submitted_notebook",
                                          "grade", "comment")}
    out = {pair: {"student": [], "submitted_assignment": [], "submitted_notebook": [], "grade": [], "comment": []}
           for pair in pairs}
    try:
        with engine.connect() as conn:
            names = {r.id: r.name for r in conn.execute(select(t["assignment"].c.id, t["assignment"].c.name))}
            students = {r.id: _jsonable(dict(r._mapping)) for r in conn.execute(select(t["student"]))}
            by_submission = {}
            for r in conn.execute(select(t["submitted_assignment"])):
                pair = (names.get(r.assignment_id), r.student_id)
                if pair in out:
                    out[pair]["submitted_assignment"].append(_jsonable(dict(r._mapping)))
                    by_submission[r.id] = pair
            by_notebook = {}
            for r in conn.execute(select(t["submitted_notebook"])):
                if r.assignment_id in by_submission:
                    out[by_submission[r.assignment_id]]["submitted_notebook"].append(_jsonable(dict(r._mapping)))
                    by_notebook[r.id] = by_submission[r.assignment_id]
            for name in ("grade", "comment"):
                for r in conn.execute(select(t[name])):
                    if r.notebook_id in by_notebook:
                        out[by_notebook[r.notebook_id]][name].append(_jsonable(dict(r._mapping)))
            for (assignment, student), rows in out.items():
                if student in students:
                    rows["student"].append(students[student])
    finally:
        engine.dispose()
    return out


def write_scratch(path, structure):
    """A new SQLite gradebook at ``path`` holding ``structure`` (the assignments, no students)."""
    from nbgrader.api import Gradebook
    url = f"sqlite:///{path}"
    course_id = structure["course"][0]["id"] if structure["course"] else "default_course"
    Gradebook(url, course_id).close()  # the schema and alembic's version stamp, as nbgrader makes them
    structure = dict(structure, course=[r for r in structure["course"] if r["id"] != course_id])
    write_rows(url, structure)
    return url


def write_rows(db_url, rows):
    """Insert ``{table: [row, ...]}`` (as read by this module) into the gradebook at ``db_url``."""
    tables, engine = _tables(), create_engine(db_url)
    try:
        with engine.begin() as conn:
            for name, table_rows in rows.items():
                if table_rows:
                    conn.execute(insert(tables[name]), [_from_json(tables[name], r) for r in table_rows])
    finally:
        engine.dispose()


def submission_result(db_url, assignment, student, course_id):
    """What autograde left for one submission, keyed by names: what :func:`merge_result` writes."""
    from nbgrader.api import Gradebook, MissingEntry
    with Gradebook(db_url, course_id) as gb:
        try:
            submission = gb.find_submission(assignment, student)
        except MissingEntry:
            return None
        result = {"timestamp": submission.timestamp.isoformat() if submission.timestamp else None, "notebooks": {}}
        for nb in submission.notebooks:
            result["notebooks"][nb.name] = {
                "late_submission_penalty": nb.late_submission_penalty,
                "grades": {g.name: {"auto_score": g.auto_score, "needs_manual_grade": bool(g.needs_manual_grade),
                                    "manual_score_seen": g.manual_score, "max_score": g.max_score}
                           for g in nb.grades},
                "comments": {c.name: {"auto_comment": c.auto_comment} for c in nb.comments},
            }
        return result


def merge_result(gb, assignment, student, result):
    """Write one worker result into the open nbgrader ``Gradebook`` ``gb`` as autograde would."""
    gb.update_or_create_student(student)
    if result["timestamp"]:
        gb.update_or_create_submission(assignment, student, timestamp=result["timestamp"])
    else:
        gb.update_or_create_submission(assignment, student)
    for nb_name, nb in result["notebooks"].items():
        submitted = gb.find_submission_notebook(nb_name, assignment, student)
        submitted.late_submission_penalty = nb["late_submission_penalty"]
        grades = {g.name: g for g in submitted.grades}
        for name, values in nb["grades"].items():
            grade = grades[name]
            grade.auto_score = values["auto_score"]
            needs = values["needs_manual_grade"]
            if grade.manual_score != values["manual_score_seen"]:  # graded by hand meanwhile: SaveAutoGrades' rule
                needs = grade.manual_score is not None or grade.auto_score is None
            grade.needs_manual_grade = needs
        comments = {c.name: c for c in submitted.comments}
        for name, values in nb["comments"].items():
            comments[name].auto_comment = values["auto_comment"]
    gb.db.commit()


def dump(db_url, course_id=None):
    """The gradebook's content keyed by names (no random ids), for comparing two gradebooks."""
    from nbgrader.api import Gradebook
    out = {"students": {}, "assignments": {}, "submissions": {}}
    with Gradebook(db_url, course_id or "default_course") as gb:
        for s in gb.students:
            out["students"][s.id] = [s.first_name, s.last_name, s.email, s.lms_user_id]
        for a in gb.assignments:
            out["assignments"][a.name] = {"duedate": str(a.duedate), "notebooks": {
                nb.name: sorted((c.name, c.max_score) for c in nb.grade_cells) for nb in a.notebooks}}
            for sub in a.submissions:
                key = f"{a.name}/{sub.student_id}"
                out["submissions"][key] = {
                    "timestamp": str(sub.timestamp), "extension": str(sub.extension), "notebooks": {
                        nb.name: {
                            "flagged": nb.flagged, "late_submission_penalty": nb.late_submission_penalty,
                            "grades": {g.name: [g.auto_score, g.manual_score, g.extra_credit, g.needs_manual_grade]
                                       for g in nb.grades},
                            "comments": {c.name: [c.auto_comment, c.manual_comment] for c in nb.comments},
                        } for nb in sub.notebooks}}
    return json.loads(json.dumps(out, default=str))
