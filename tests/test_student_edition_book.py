"""The book's examples run on the student edition of chibigrad (issue 5).

The student edition stubs every region of chibigrad marked ``# BEGIN EXERCISE``; the rest of the
package must not need them. This executes every chapter's code cells (``book/*.md`` through
jupytext and nbclient, as the book build does) in a kernel that imports the stubbed package, and
fails on an error in a cell not tagged ``raises-exception``, on a tagged cell that no longer raises,
and on any output that shows an exercise stub's message. The chapters run two at a time, each in
its own kernel.
"""
import concurrent.futures
import os
import shutil
from pathlib import Path

import pytest

from autograder import build

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted(p for p in (ROOT / "book").glob("*.md") if "```{code-cell}" in p.read_text())
STUB_TEXT = "you write this in"  # in every stub's message (autograder.build.stub_exercises)


def _execute(chapter, student, workdir):
    """Run one chapter with ``student`` first on the kernel's path; the executed notebook, or the error."""
    import jupytext
    import nbclient
    import nbformat

    nb = jupytext.read(chapter)
    # Finds chibigrad without importing it: a chapter may set environment variables that chibigrad
    # reads when imported (chapter 9: CHIBIGRAD_SIMULATE_CUDA) in its first cell.
    nb.cells.insert(0, nbformat.v4.new_code_cell(
        f"import importlib.util\norigin = importlib.util.find_spec('chibigrad').origin\n"
        f"assert origin.startswith({str(student) + os.sep!r}), origin\ndel origin"))
    env = dict(build.nbgrader_env(), PYTHONPATH=str(student), MPLBACKEND="Agg")
    workdir.mkdir()
    if (ROOT / "book" / "data").is_dir():  # a chapter reads its recorded data as the book build does, from book/
        shutil.copytree(ROOT / "book" / "data", workdir / "data")
    try:  # chapter 6c imports its cases from ../benchmarks, as it does from book/
        os.symlink(ROOT / "benchmarks", workdir.parent / "benchmarks")
    except FileExistsError:
        pass
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(workdir)}})
    try:
        client.execute(env=env)
    except nbclient.exceptions.CellExecutionError as err:
        return nb, err
    return nb, None


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """``{chapter name: (executed notebook, error or None)}`` for every chapter, with the student package."""
    base = tmp_path_factory.mktemp("student-book")
    stubbed = build.write_student_package(base / "student" / "chibigrad")
    assert stubbed, "the student edition stubs nothing: the test would prove nothing"
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {p.stem: pool.submit(_execute, p, base / "student", base / p.stem) for p in CHAPTERS}
        return {name: f.result() for name, f in futures.items()}


def test_there_are_chapters():
    assert len(CHAPTERS) >= 9, [p.name for p in CHAPTERS]


@pytest.mark.slow
@pytest.mark.parametrize("chapter", [p.stem for p in CHAPTERS])
def test_chapter_runs_with_the_student_edition(executed, chapter):
    nb, error = executed[chapter]
    assert error is None, f"book/{chapter}.md fails with the student edition of chibigrad:\n{error}"
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        outputs = cell.get("outputs", [])
        where = f"book/{chapter}.md, code cell {index} (counting the import check as 0):\n{cell.source[:300]}"
        if "raises-exception" in cell.metadata.get("tags", []):
            assert any(o.output_type == "error" for o in outputs), f"{where}\nis tagged raises-exception but raised nothing"
        for output in outputs:
            text = "".join(output.get("text", "")) + output.get("evalue", "") + "".join(output.get("traceback", []))
            text += str(output.get("data", {}).get("text/plain", ""))
            assert STUB_TEXT not in text, f"{where}\nreaches an exercise stub of the student edition:\n{text[-2000:]}"
