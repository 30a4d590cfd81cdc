"""The student's JupyterLab, opened as a student opens it: `make lab` on a student edition, in headless Chromium.

A student edition holding 01_graphs (its solutions filled in, as a student who finished would have it) and the
assignments of ``FIRST_TRIES`` is written to a temporary folder; `make lab` starts JupyterLab on it exactly as
the README says (with `--no-browser`, a port and a token). The browser opens the notebook, runs every cell,
clicks Validate and reads the result; the page has no instructor tools (no Nbgrader menu, formgrader,
create-assignment or course-list UI, no exchange errors, no news popup), no Extension Manager and no Jupytext
launcher entries, and the server has no formgrader and does not list nbgrader_config.py. Then, for a wrong
first answer in each assignment of ``FIRST_TRIES``, Validate's failure dialog names the exercise and says what
was expected in its first lines. Marked slow: each Validate runs its whole notebook (under a load average of 13 on 2 cores, the edition and
Lab took 2.5-4 min and three first tries 2-3.5 min). Screenshots land in
`_build/screenshots/`.
"""
import os
import socket
import subprocess
import time
import urllib.request

import nbformat
import pytest

from autograder import build
from test_book_browser import CHROMIUM, CHROMIUM_ARGS, ROOT

pytestmark = pytest.mark.slow
ASSIGNMENT = "01_graphs"
# A wrong first answer (a file of notebooks/wrong_answers) for one exercise of every assignment: the other
# exercises answered, so the exercise's visible tests are the one failure Validate shows.
FIRST_TRIES = [("01_graphs", "walk", "walk__none_edges"), ("01b_engine", "accumulate", "accumulate__drops_size_one"),
               ("02_backward", "hypot", "hypot__scalar_only"),
               ("03_graph_lifetime", "count_alive_graphs", "count_alive_graphs__no_gc_collect"),
               ("04_stop_gradient", "gradient_penalty", "gradient_penalty__norm_over_dim_1"),
               ("05_accumulation", "lion", "lion__momentum_first"),
               ("06_custom_functions", "logsumexp", "logsumexp__no_unsqueeze"),
               ("06b_forward_mode", "softplus", "softplus__no_save_for_forward"),
               ("06c_vmap", "sum_rule", "sum_rule__batch_left_in_middle"),
               ("07_checkpointing", "checkpoint_fn", "checkpoint_fn__backward_inside"),
               ("07b_compile", "dead_nodes", "dead_nodes__unread_only"),
               ("08_debugging", "attention", "attention__no_max_shift"),
               ("09_gpu", "to_device", "to_device__converts_everything")]
TOKEN = "student-lab-test"
INSTRUCTOR_WORDS = ["Formgrader", "Create Assignment", "Course List", "Assignment List", "Nbgrader",
                    "Error fetching courses", "exchange directory", "official Jupyter news"]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answered(student, assignment, wrong=None, name=None):
    """The released notebook of ``assignment`` with every solution cell filled in (``wrong``: ``(exercise,
    mistake)``, that exercise's cell holds the wrong answer instead), written as ``name`` beside it."""
    source = nbformat.read(ROOT / "notebooks" / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    solutions = {c.id: c.source for c in source.cells if c.metadata.get("nbgrader", {}).get("solution")}
    if wrong:
        solutions[wrong[0]] = (ROOT / "notebooks" / "wrong_answers" / assignment / f"{wrong[1]}.py").read_text()
    path = student / assignment / f"{assignment}.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        cell.source = solutions.get(cell.id, cell.source)
    nbformat.write(nb, path.with_name(name or path.name))


@pytest.fixture(scope="module")
def student_edition(tmp_path_factory):
    """A student edition with 01_graphs, its solution cells filled in, and the assignments of FIRST_TRIES, each
    with a notebook ``<assignment>-first-try.ipynb`` holding its wrong first answer."""
    base = tmp_path_factory.mktemp("lab")
    course_dir = base / "course"
    course_dir.mkdir()
    (course_dir / "nbgrader_config.py").write_text((ROOT / "notebooks" / "nbgrader_config.py").read_text())
    names = sorted({ASSIGNMENT, *(a for a, *_ in FIRST_TRIES)})
    for sub in ("source", "source_text"):
        (course_dir / sub).mkdir()
        for name in names:
            os.symlink(ROOT / "notebooks" / sub / name, course_dir / sub / name)
    build.generate_assignments(course_dir, names)
    student = base / "student"
    build.write_student_edition(student, names, course_dir / "release", course_dir)
    for assignment, exercise, mistake in FIRST_TRIES:
        _answered(student, assignment, (exercise, mistake), f"{assignment}-first-try.ipynb")
    _answered(student, ASSIGNMENT)
    return student


@pytest.fixture(scope="module")
def lab(student_edition):
    """`make lab` on the student edition (released just now: `-o` tells make not to release it again); its URL."""
    stamp = student_edition.parent / "released"
    stamp.touch()
    port = _free_port()
    log = open(student_edition.parent / "lab.log", "w")
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(student_edition.parent / "runtime"))
    process = subprocess.Popen(
        ["make", "--no-print-directory", "-C", str(ROOT), "-o", str(stamp), "lab", f"STUDENT={student_edition}",
         f"RELEASED={stamp}",
         f"LAB_ARGS=--no-browser --port={port} --IdentityProvider.token={TOKEN}"],
        stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2)
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail("make lab did not start JupyterLab:\n" + (student_edition.parent / "lab.log").read_text())
                time.sleep(0.5)
        yield url
    finally:
        os.killpg(process.pid, 15)
        process.wait(timeout=30)
        log.close()


def _status(url):
    try:
        return urllib.request.urlopen(url, timeout=10).status
    except urllib.error.HTTPError as err:
        return err.code


def test_the_servers_instructor_extensions_are_off(lab):
    assert _status(f"{lab}/formgrader?token={TOKEN}") == 404, "the formgrader must not be served to students"
    assert _status(f"{lab}/assignments?token={TOKEN}") == 404, "no assignment list (it needs an exchange)"
    import json
    root = json.load(urllib.request.urlopen(f"{lab}/api/contents/?token={TOKEN}", timeout=10))
    names = [item["name"] for item in root["content"]]
    assert ASSIGNMENT in names and "nbgrader_config.py" not in names, f"the file browser lists {names}"


def test_a_student_runs_the_notebook_and_validates_it_in_chromium(lab, student_edition):
    if not CHROMIUM.exists():
        pytest.skip("Chromium not installed: apt-get install -y chromium (CI installs it in .ci/run)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is pinned in requirements.txt")
    problems = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.goto(f"{lab}/lab/tree/{ASSIGNMENT}/{ASSIGNMENT}.ipynb?token={TOKEN}")
        page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
        page.get_by_text("Kernel status: Idle").first.wait_for(state="attached", timeout=60_000)  # the kernel is up
        ran = _run_every_cell(page, lab, student_edition / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
        failed = [(c.id, o.get("ename") or o.get("text", "")[:300]) for c in ran.cells if c.cell_type == "code"
                  for o in c.outputs if o.output_type == "error" or o.get("name") == "stderr"]
        assert not failed, f"cells failed or wrote to stderr in the student's Lab: {failed}"
        page.get_by_role("button", name="Validate").first.click()
        dialog = page.locator(".jp-Dialog")
        dialog.wait_for(timeout=60_000)
        sync_api.expect(dialog).to_contain_text("Success! Your notebook passes all the tests.", timeout=60_000)
        result = dialog.inner_text()
        page.keyboard.press("Escape")
        menus = page.locator(".lm-MenuBar-itemLabel").all_inner_texts()
        text = page.locator("body").inner_text()
        page.screenshot(path=str(_screenshots() / "student-lab.png"))
        page.keyboard.press("Control+Shift+L")  # a new Launcher, as from the File menu
        launcher = page.locator(".jp-Launcher-body").first
        launcher.wait_for(timeout=30_000)
        launcher_text = launcher.inner_text()
        tabs = page.locator(".jp-SideBar .lm-TabBar-tab").evaluate_all("tabs => tabs.map(t => t.title)")
        browser.close()
    assert "Notebook" in launcher_text and "Jupytext" not in launcher_text, launcher_text
    assert not [t for t in tabs if "Extension" in t], f"the sidebar offers the Extension Manager: {tabs}"
    assert "Success" in result
    assert menus[:4] == ["File", "Edit", "View", "Run"], menus
    assert "Nbgrader" not in menus, f"the instructor's Nbgrader menu is there: {menus}"
    shown = [word for word in INSTRUCTOR_WORDS if word.lower() in text.lower()]
    assert not shown, f"the student's Lab shows instructor tools or their errors: {shown}"
    assert "hidden tests" in text, "the notebook tells the student that grading adds hidden tests"
    assert not [p for p in problems if "nbgrader" in p.lower() or "exchange" in p.lower()], problems


def _run_every_cell(page, lab, path, tries=3):
    """Run > Run All Cells, as a student does, until every non-empty code cell of the saved notebook has run (or
    Run All stopped at an error); the saved notebook. A click that lands while Lab is still connecting the
    notebook to its kernel runs nothing (for a student too, who clicks again): then it is clicked again."""
    for attempt in range(tries):
        page.keyboard.press("Escape")  # nothing else open
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        nb = _saved_once_idle(page, lab, path)
        code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]  # Lab skips empty cells
        if all(c.execution_count for c in code) or any(o.output_type == "error" for c in code for o in c.outputs):
            return nb
        page.screenshot(path=str(_screenshots() / f"student-lab-run-all-{attempt}.png"))
        if any(c.execution_count for c in code):
            break  # it ran, but not to the end: not a lost click
    pytest.fail(f"after Run All Cells, cells never ran: {[c.id for c in code if not c.execution_count]}; "
                f"prompts on screen {page.locator('.jp-InputPrompt').all_inner_texts()}")


def _saved_once_idle(page, lab, path, timeout=150, quiet=3):
    """Wait until the kernel has been idle for `quiet` s (the server knows; Lab renders only the cells on screen),
    then File > Save Notebook; the notebook on disk."""
    import json
    deadline, idle_since = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        kernels = json.load(urllib.request.urlopen(f"{lab}/api/kernels?token={TOKEN}", timeout=10))
        if not all(k["execution_state"] == "idle" for k in kernels):
            idle_since = None
        elif time.monotonic() - (idle_since := idle_since or time.monotonic()) > quiet:
            break
        time.sleep(0.5)
    for text in page.locator(".jp-Dialog").all_inner_texts():  # e.g. a kernel choice while Lab was still starting
        page.screenshot(path=str(_screenshots() / "student-lab-dialog.png"))
        print(f"Lab showed a dialog, accepted as a student would: {text!r}")
        page.locator(".jp-Dialog .jp-mod-accept").first.click()
    page.locator(".lm-MenuBar-itemLabel", has_text="File").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Save Notebook").first.click()
    time.sleep(2)
    return nbformat.read(path, as_version=4)


def _screenshots():
    folder = ROOT / "_build" / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_validate_names_the_exercise_and_what_was_expected(lab, student_edition):
    """For a wrong first answer per assignment of FIRST_TRIES, Validate's dialog reads, in its first lines, the
    exercise's name (the first line of its tests cell) and, in the first lines of the error, what was expected
    and what came back: one traceback, no chain, no frame of the setup cell's helpers."""
    if not CHROMIUM.exists():
        pytest.skip("Chromium not installed: apt-get install -y chromium (CI installs it in .ci/run)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is pinned in requirements.txt")
    shown = {}
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        for assignment, exercise, mistake in FIRST_TRIES:
            # a workspace of its own: Lab would otherwise reopen the earlier tests' notebooks beside it
            page.goto(f"{lab}/lab/workspaces/{assignment}/tree/{assignment}/{assignment}-first-try.ipynb"
                      f"?token={TOKEN}&reset")
            page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
            tabs = page.locator(".jp-NotebookPanel").count()
            assert tabs == 1, f"{assignment}: {tabs} notebooks open; Validate would check the first"
            page.get_by_role("button", name="Validate").first.click()
            dialog = page.locator(".jp-Dialog")
            sync_api.expect(dialog).to_contain_text("The following cell failed", timeout=180_000)
            # the cell's source, then its outputs: a warning the wrong answer printed comes before the error
            source, *outputs = dialog.locator(".jp-RenderedText pre").all_inner_texts()
            error = outputs[-1]
            shown[assignment] = (exercise, dialog.inner_text(), source, error)
            page.screenshot(path=str(_screenshots() / f"validate-failure-{assignment}.png"))
            page.keyboard.press("Escape")
        browser.close()
    for assignment, (exercise, text, source, error) in shown.items():
        name = f"Exercise {build.exercise_name(assignment, exercise)}"
        lines = [line for line in text.splitlines() if line.strip()]
        assert name in "\n".join(lines[:3]), f"{assignment}: the dialog does not start with {name!r}:\n{text[:2000]}"
        assert text.count("The following cell failed") == 1, f"{assignment}: more than the one wrong answer failed"
        # from the traceback on: a warning the student's own code raised may be printed above it
        head = "\n".join(error[error.find("Traceback"):].splitlines()[:8])
        assert "expected" in head and "got" in head, f"{assignment}: the error's first lines:\n{error[:2000]}"
        assert error.count("Traceback (most recent call last)") == 1 and "above exception" not in error, error
        assert "def attempt" not in error and "in attempt" not in error, f"the helper's frame is shown:\n{error}"
