"""``integrity``: what in the submissions does not look like honest work on the released notebook.

Static, on each ``submitted/<student>/<assignment>/<notebook>.ipynb`` against the released one:

- ``edited locked cell``: a read-only cell (instructions, setup, tests) whose source changed
  (nbgrader restores it before grading, so this costs nothing, but it is worth a look);
- ``deleted cell``: an nbgrader cell of the release that is gone;
- ``changed cell metadata``: a cell's nbgrader role or points changed, or a cell that claims to
  be graded that the release does not have;
- ``changed kernel``: another kernel than the release's;
- ``suspicious outputs``: outputs on a cell that was never run (``execution_count`` null), an
  execution count used twice, or a test cell whose saved output is a number (what nbgrader
  reads as partial credit).

From grading (``grading/records``): ``tampering while graded``: cells that passed in the kernel
but not in the clean re-run, course modules the code replaced, writes outside its folder,
database connections, signals, files named like the grader's packages, imports of the grader's modules;
``stopped at a limit``: the sandbox's memory, process or time limit reached; ``normalised before
grading``: what the grader changed in its copy of the notebook so that nbgrader could grade it
(``autograder.grading.scoring.normalise``: the release's nbgrader metadata put back, cells claiming a
graded role the release does not have turned into ordinary cells).
"""
import csv
import json
from pathlib import Path

NORMALISED = "normalised before grading"  # autograder.grading.scoring.NOTE
TAMPER_SIGNS = ("outside its folder", "SQLite database",
                "sent signals", "named like the grader's packages", "changed files outside", "the judge saw",
               "outside its allowance", "tried to read the course", "permissions or owners outside",
               "symbolic links in its folder", "the sandbox's memory cap", "killed by the sandbox",
               "tried to run a program", "which the sandbox seals", "called C functions through ctypes",
               "native code of its own")
# the sandbox's limits reached (memory, processes, time): honest code can do it too, so a category of its own
LIMIT_SIGNS = ("the grader stopped", "the grader killed")


def _nbgrader(cell):
    return cell.get("metadata", {}).get("nbgrader") or {}


def _norm(source):
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def check_notebook(submitted, released):
    """``[(category, cell, detail)]`` for one submitted notebook (a dict) against the release."""
    findings = []
    sub_cells = {_nbgrader(c).get("grade_id"): c for c in submitted.get("cells", []) if _nbgrader(c).get("grade_id")}
    for cell in released["cells"]:
        meta = _nbgrader(cell)
        name = meta.get("grade_id")
        if not name:
            continue
        other = sub_cells.get(name)
        if other is None:
            findings.append(("deleted cell", name, "the release's cell is missing"))
            continue
        if meta.get("locked") and _norm(_source(other)) != _norm(_source(cell)):
            findings.append(("edited locked cell", name, "source differs from the release"))
        theirs = _nbgrader(other)
        for key in ("locked", "solution", "grade", "points"):
            if theirs.get(key) != meta.get(key):
                findings.append(("changed cell metadata", name, f"{key}: {meta.get(key)!r} -> {theirs.get(key)!r}"))
    released_ids = {_nbgrader(c).get("grade_id") for c in released["cells"]}
    for name, cell in sub_cells.items():
        if name not in released_ids and (_nbgrader(cell).get("grade") or _nbgrader(cell).get("points")):
            findings.append(("changed cell metadata", name, "a graded cell the release does not have"))
    want = (released.get("metadata", {}).get("kernelspec") or {}).get("name")
    got = (submitted.get("metadata", {}).get("kernelspec") or {}).get("name")
    if got != want:
        findings.append(("changed kernel", "", f"{want!r} -> {got!r}"))
    counts = {}
    for cell in submitted.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        name = _nbgrader(cell).get("grade_id") or cell.get("id", "?")
        outputs, count = cell.get("outputs") or [], cell.get("execution_count")
        if outputs and count is None:
            findings.append(("suspicious outputs", name, "outputs on a cell that was never run"))
        if count is not None:
            counts.setdefault(count, []).append(name)
        if _nbgrader(cell).get("grade") and not _nbgrader(cell).get("solution"):
            for output in outputs:
                data = output.get("data", {}).get("text/plain") if output.get("output_type") == "execute_result" else None
                if data is not None and _is_number(data):
                    findings.append(("suspicious outputs", name, f"a test cell whose output is the number {data!r}"))
    for count, names in counts.items():
        if len(names) > 1:
            findings.append(("suspicious outputs", ", ".join(names), f"execution count {count} used twice"))
    return findings


def _source(cell):
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _is_number(text):
    text = "".join(text) if isinstance(text, list) else text
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True


def integrity(course, output=None):
    """Check every submission; writes the CSV and returns ``(path, findings)``, where findings are
    dicts with student, assignment, notebook, category, cell and detail."""
    findings = []
    notebooks = course.assignments()
    if course.submitted.is_dir():
        for student_dir in sorted(p for p in course.submitted.iterdir() if p.is_dir()):
            for assignment, names in notebooks.items():
                folder = student_dir / assignment
                if not folder.is_dir():
                    continue
                for name in names:
                    findings += _check_file(course, student_dir.name, assignment, name, folder / f"{name}.ipynb")
    for (assignment, student), record in sorted(course.records_all().items()):
        for note in record.get("notes", []):
            if note.startswith(NORMALISED):
                cell = note[len(NORMALISED):].split(":")[1].strip().removeprefix("cell ")
                findings.append({"student": student, "assignment": assignment, "notebook": "",
                                 "category": NORMALISED, "cell": cell, "detail": note.split(": ", 2)[-1]})
            elif any(sign in note for sign in TAMPER_SIGNS):
                findings.append({"student": student, "assignment": assignment, "notebook": "",
                                 "category": "tampering while graded", "cell": "", "detail": note})
            elif any(sign in note for sign in LIMIT_SIGNS):
                findings.append({"student": student, "assignment": assignment, "notebook": "",
                                 "category": "stopped at a limit", "cell": "", "detail": note})
    output = Path(output or course.reports / "integrity.csv")
    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["student", "assignment", "notebook", "category", "cell", "detail"])
        writer.writeheader()
        writer.writerows(findings)
    return output, findings


def _check_file(course, student, assignment, name, path):
    row = {"student": student, "assignment": assignment, "notebook": name}
    if not path.is_file():
        return []
    released_path = course.release / assignment / f"{name}.ipynb"
    try:
        submitted = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(submitted, dict):
            raise ValueError("not a JSON object")
    except (ValueError, UnicodeDecodeError) as err:
        return [dict(row, category="not a valid notebook", cell="", detail=str(err)[:200])]
    if not released_path.is_file():
        return [dict(row, category="not checked", cell="", detail=f"{released_path} is missing: run `release`")]
    released = json.loads(released_path.read_text())
    return [dict(row, category=c, cell=cell, detail=d) for c, cell, d in check_notebook(submitted, released)]


def format_findings(findings):
    if not findings:
        return "no findings\n"
    lines, by_student = [], {}
    for f in findings:
        by_student.setdefault((f["student"], f["assignment"]), []).append(f)
    for (student, assignment), items in sorted(by_student.items()):
        lines.append(f"{student}/{assignment}:")
        for f in items:
            lines.append(f"  {f['category']}" + (f" [{f['cell']}]" if f["cell"] else "") + f": {f['detail']}")
    return "\n".join(lines) + "\n"
