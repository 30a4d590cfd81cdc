"""What a submission's grade is computed from: the release's cells, and how each test cell ran.

Two rules, applied in the grading worker around nbgrader's ``Autograde``:

1. **Every submission gets a grade.** Before nbgrader reads a notebook, :func:`normalise`
   matches its cells to the release's by ``grade_id`` (or, failing that, by the notebook cell
   id) and gives each matched cell the release's nbgrader metadata; a cell that claims an nbgrader
   role the release does not give it loses the claim and runs as an ordinary cell (its code is
   the student's, so it is kept, never dropped). Without this, nbgrader gives up on the whole
   notebook: a test cell whose ``grade`` flag was switched off makes ``OverwriteCells`` raise
   "Inconsistent checksums", an unknown ``grade_id`` raises ``KeyError: 'grade_id'``, and the
   student scores 0 on every retry. Sources are not touched here: nbgrader's ``OverwriteCells``
   restores locked cells from the gradebook as always.

2. **A test cell earns its points only if it ran to the end without an error** (and, in a judged
   assignment, the judge's verdict decides that error: ``autograder.grading.judge``). nbgrader decides a
   test cell's score from its outputs and stops at the first ``execute_result``: a value displayed
   before the error (by ``get_ipython().displayhook``, a ``pre_run_cell`` callback, ...) reads as
   full or partial credit. :class:`TestCellOutputs` runs right after the kernel: it turns every ``execute_result``
   of a test cell into ``display_data`` (still shown in feedback, never read as a score) and adds
   an error to a cell the kernel did not finish. nbgrader's rule then reduces to "an error or
   stderr output scores 0". No cell earns partial credit from a number it displays.
"""
import copy

from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.preprocessors import NbGraderPreprocessor

NOTE = "normalised before grading"  # the prefix of the notes integrity.csv lists


def _meta(cell):
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta if isinstance(meta, dict) else ({} if meta is None else {"invalid": meta})


def _claims(meta):
    return any(meta.get(k) for k in ("grade", "solution", "locked", "task", "points"))


def normalise(nb, release):
    """Give ``nb``'s cells (an nbformat notebook, changed in place) the release's nbgrader metadata.

    ``release``: ``{grade_id: nbgrader metadata}`` of the released notebook. A release cell claimed
    by several cells goes to the last of them (nbgrader's ``DeduplicateIds`` rule: the cell run
    last defines what is graded). Returns one sentence per change, for the report and integrity.csv.
    """
    def key(cell):
        grade_id = _meta(cell).get("grade_id")
        if isinstance(grade_id, str) and grade_id in release:
            return grade_id
        cell_id = cell.get("id")
        return cell_id if isinstance(cell_id, str) and cell_id in release else None

    owner = {}
    for index, cell in enumerate(nb.cells):
        if key(cell) is not None:
            owner[key(cell)] = index
    changes = []
    for index, cell in enumerate(nb.cells):
        name, meta = key(cell), _meta(cell)
        if name is not None and owner[name] == index:
            want = release[name]
            differs = sorted(k for k in set(want) | set(meta) if k != "checksum" and meta.get(k) != want.get(k))
            if differs:
                changes.append(f"{NOTE}: cell {name}: nbgrader metadata put back as released ("
                               + ", ".join(f"{k}: {meta.get(k)!r} -> {want.get(k)!r}" for k in differs[:4]) + ")")
            cell.metadata["nbgrader"] = NotebookNode(copy.deepcopy(want))
        elif "nbgrader" in cell.get("metadata", {}):
            label = meta.get("grade_id") or cell.get("id") or f"#{index}"
            if name is not None:
                changes.append(f"{NOTE}: cell {label}: a second copy of the release's cell {name}; graded as an "
                               "ordinary cell (its code still runs)")
            elif _claims(meta):
                role = "graded" if (meta.get("grade") or meta.get("points")) else "an nbgrader cell"
                changes.append(f"{NOTE}: cell {label}: claims to be {role} but the release has no such cell; its "
                               "claim was dropped (it runs as an ordinary cell)")
            del cell.metadata["nbgrader"]
    return changes


def release_metadata(structure):
    """``{(assignment, notebook): {grade_id: nbgrader metadata}}`` from the gradebook's description
    of the assignments (``gradebook.read_structure``): what ``generate_assignment`` recorded."""
    assignments = {r["id"]: r["name"] for r in structure["assignment"]}
    notebooks = {r["id"]: (assignments.get(r["assignment_id"]), r["name"]) for r in structure["notebook"]}
    grade = {r["id"]: r for r in structure["grade_cells"]}
    solution = {r["id"] for r in structure["solution_cells"]}
    task = {r["id"] for r in structure["task_cells"]}
    ids = {(r["notebook_id"], r["name"]): r["id"] for r in structure["base_cell"]}
    out = {}
    for cell in structure["source_cell"]:
        where = notebooks.get(cell["notebook_id"])
        if where is None:
            continue
        base = ids.get((cell["notebook_id"], cell["name"]))
        meta = {"cell_type": cell["cell_type"], "grade": base in grade, "grade_id": cell["name"],
                "locked": bool(cell["locked"]), "schema_version": 3, "solution": base in solution, "task": base in task}
        if base in grade:
            points = grade[base]["max_score"]
            meta["points"] = int(points) if float(points).is_integer() else points
        if cell.get("checksum"):
            meta["checksum"] = cell["checksum"]
        out.setdefault(where, {})[cell["name"]] = meta
    return out


def is_test_cell(cell):
    return cell.cell_type == "code" and utils.is_grade(cell) and not utils.is_solution(cell)


def _name(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id") or cell.get("id") or "?"


def _error(ename, message):
    return NotebookNode(output_type="error", ename=ename, evalue=message, traceback=[f"{ename}: {message}"])


def _has_error(cell):
    return any(o.output_type == "error" or (o.output_type == "stream" and o.get("name") == "stderr")
               for o in cell.outputs)


class TestCellOutputs(NbGraderPreprocessor):
    """Right after the kernel: no output of a test cell can read as a score except an error.
    ``execute_result`` becomes ``display_data``; a cell the kernel did not finish gets an error."""

    def preprocess(self, nb, resources):
        from .execute import current_job
        statuses = current_job().cells
        for cell in nb.cells:
            if not is_test_cell(cell):
                continue
            for k, output in enumerate(cell.outputs):
                if output.output_type == "execute_result":
                    cell.outputs[k] = NotebookNode(output_type="display_data", data=output.get("data", {}),
                                                   metadata=output.get("metadata", {}))
            status = statuses.get(_name(cell), {}).get("status", "ok")
            if status != "ok" and not _has_error(cell):
                cell.outputs.append(_error("NotFinished", f"this cell did not run to the end ({status})"))
        return nb, resources

    def preprocess_cell(self, cell, resources, index):  # pragma: no cover - preprocess does the work
        return cell, resources

