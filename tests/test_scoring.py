"""What a grade is computed from (``autograder.grading.scoring``). Fast: no kernel, no nbgrader run. The same tricks, graded end to end, are ``synthetic_classes.gaming_students`` in
``tests/test_autograder.py``."""
import copy

import nbformat
import pytest
from nbgrader import utils

from autograder import build
from autograder.grading import execute, scoring


def _source():
    return nbformat.read(build.NOTEBOOKS / "source" / "01_graphs" / "01_graphs.ipynb", as_version=4)


def _release(nb):
    return {c.metadata.nbgrader["grade_id"]: dict(c.metadata.nbgrader) for c in nb.cells if "nbgrader" in c.metadata}


def _cell(nb, cell_id):
    return next(c for c in nb.cells if c.id == cell_id)


def test_normalise_puts_back_the_release_metadata_and_keeps_the_students_code():
    release_nb = _source()
    release = _release(release_nb)
    nb = copy.deepcopy(release_nb)
    _cell(nb, "walk").source = "def walk(t):\n    return ['my own code']"
    _cell(nb, "walk-tests").metadata.nbgrader["grade"] = False  # nbgrader: "Inconsistent checksums"
    del _cell(nb, "summarize-tests").metadata["nbgrader"]  # found again by its cell id
    _cell(nb, "depth-tests").metadata.nbgrader["points"] = 30
    extra = nbformat.v4.new_code_cell("print('bonus')", id="bonus")  # nbgrader: KeyError 'grade_id'
    extra.metadata["nbgrader"] = {"grade": True, "grade_id": "bonus", "points": 5, "locked": False,
                                  "solution": False, "schema_version": 3}
    copied = nbformat.v4.new_code_cell("def walk(t):\n    return []", id="copy-of-walk")
    copied.metadata["nbgrader"] = dict(_cell(nb, "walk").metadata.nbgrader)
    nb.cells[3:3] = [extra, copied]  # the copy comes first: the last cell claiming "walk" keeps the role
    changes = scoring.normalise(nb, release)

    assert [c.metadata.get("nbgrader") for c in nb.cells if c.id not in ("bonus", "copy-of-walk")] == \
        [c.metadata.nbgrader for c in release_nb.cells]
    assert "nbgrader" not in _cell(nb, "bonus").metadata and _cell(nb, "bonus").source == "print('bonus')"
    assert "nbgrader" not in _cell(nb, "copy-of-walk").metadata
    assert _cell(nb, "walk").source == "def walk(t):\n    return ['my own code']"
    assert [c.id for c in nb.cells] == [c.id for c in release_nb.cells[:3]] + ["bonus", "copy-of-walk"] + [
        c.id for c in release_nb.cells[3:]], "no cell is dropped or moved"
    text = "\n".join(changes)
    for expected in ("cell walk-tests: nbgrader metadata put back as released (grade: False -> True)",
                     "cell summarize-tests: nbgrader metadata put back", "points: 30 -> 3",
                     "cell bonus: claims to be graded but the release has no such cell",
                     "cell walk: a second copy of the release's cell walk"):
        assert expected in text, (expected, changes)
    assert all(c.startswith(scoring.NOTE) for c in changes)
    assert scoring.normalise(nb, release) == [], "normalising twice changes nothing"
    assert scoring.normalise(copy.deepcopy(release_nb), release) == [], "an honest notebook is not touched"


@pytest.fixture()
def job():
    context = execute.JobContext({"memory_bytes": 0}, 60, 8)
    execute.CURRENT["job"] = context
    yield context
    execute.CURRENT["job"] = None


def _graded(source, outputs, grade_id="walk-tests"):
    cell = nbformat.v4.new_code_cell(source, id=grade_id)
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": grade_id, "points": 2, "locked": True, "solution": False,
                                 "schema_version": 3}
    cell.outputs = [nbformat.from_dict(o) for o in outputs]
    return cell


RESULT = {"output_type": "execute_result", "execution_count": 3, "data": {"text/plain": "'ok'"}, "metadata": {}}
NUMBER = dict(RESULT, data={"text/plain": "1.0"})
ERROR = {"output_type": "error", "ename": "NotImplementedError", "evalue": "", "traceback": []}


def test_a_displayed_value_never_reads_as_points(job):
    nb = nbformat.v4.new_notebook(cells=[
        _graded("walk(y)", [RESULT, ERROR], "walk-tests"),  # displayhook('ok') before the raise: was 2/2
        _graded("summarize(y)", [NUMBER, ERROR], "summarize-tests"),  # a pre_run_cell callback's 1.0: was 1/2
        _graded("depth(y)", [NUMBER], "depth-tests"),  # no error: full points, not 1.0 of 2 ("partial credit")
        _graded("find_leaves(y)", [], "find_leaves-tests")])
    job.cells = {"walk-tests": {"status": "error"}, "summarize-tests": {"status": "error"},
                 "depth-tests": {"status": "ok"}, "find_leaves-tests": {"status": "not run"}}
    assert [utils.determine_grade(c)[0] for c in nb.cells] == [2, 1, 1, 2], "nbgrader's rule, before"
    scoring.TestCellOutputs().preprocess(nb, {})
    assert [utils.determine_grade(c)[0] for c in nb.cells] == [0, 0, 2, 0]
    assert nb.cells[0].outputs[0].output_type == "display_data", "still shown in feedback"

