"""The course's build steps: graded notebooks from text, and the student edition.

Two things are generated here and nowhere else:

1. ``build_sources()``: every ``notebooks/source_text/<a>/<a>.py`` (jupytext
   percent format, readable diffs) becomes ``notebooks/source/<a>/<a>.ipynb``
   with nbgrader's cell metadata, which is what nbgrader reads. A cell's role
   is written in its header::

       # %% [markdown] nbgrader="readonly" id="walk-text"        locked text
       # %% nbgrader="readonly" id="setup"                       locked code
       # %% nbgrader="solution" id="walk"                        the student's answer
       # %% nbgrader="tests" id="walk-tests" points=2            graded tests

   The ``id`` is the cell's nbgrader ``grade_id`` and its notebook cell id, so
   it must never change once an assignment is released. A ``solution`` cell
   ``X`` is exercise ``<NN>.X`` (``NN`` = the assignment's number) and is
   graded by the ``tests`` cell ``X-tests`` that follows it.

2. ``release_student_edition(dest)``: the student notebooks (``nbgrader
   generate_assignment``), a copy of chibigrad in which every region marked
   ``# BEGIN EXERCISE NN.name`` ... ``# END EXERCISE`` is replaced by a
   ``raise NotImplementedError("Exercise NN.name: ...")``, requirements, a
   README and a JupyterLab configuration for students. Run ``python -m
   autograder.build --help``.

Releasing again never loses a student's work (``install_edition``): files that
are new are added, files the student has not changed since the last release are
updated, and a file the student changed stays as it is, with the new release
beside it under another name. Nothing is deleted.
"""
import argparse
import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
PACKAGE = ROOT / "chibigrad"

ROLES = ("readonly", "solution", "tests")
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
BEGIN_EXERCISE = re.compile(r"^(?P<indent>[ \t]*)# BEGIN EXERCISE (?P<id>\d\d[a-z]?\.[A-Za-z0-9_]+)[ \t]*$")
END_EXERCISE = re.compile(r"^[ \t]*# END EXERCISE[ \t]*$")
STUDENT_REQUIREMENTS = ["numpy", "jupyterlab", "notebook", "nbgrader", "ipykernel"]
MANIFEST = ".release.json"  # in the student edition: the hash of every file as it was released
LAB_CONFIG = ".jupyter"  # in the student edition: JUPYTER_CONFIG_DIR for a Lab without the instructor's tools


# ---- notebooks from text ------------------------------------------------------------------------------------------

def assignments(course_dir=NOTEBOOKS):
    """Assignment names (``01_graphs``, ...), from the text sources."""
    return sorted(p.name for p in (Path(course_dir) / "source_text").iterdir() if (p / f"{p.name}.py").is_file())


def number(assignment):
    """``"02_backward"`` -> ``"02"``, ``"01b_engine"`` -> ``"01b"``: the assignment's chapter number."""
    return assignment.split("_")[0]


def exercise_name(assignment, cell_id):
    """``("02_backward", "dfs_order")`` -> ``"02.dfs_order"``: how messages and stubs name an exercise."""
    return f"{number(assignment)}.{cell_id}"


def notebook_from_text(path):
    """The nbgrader notebook for one text source, checked: unique ids, every
    solution followed by its tests cell with points and hidden tests."""
    import jupytext
    import nbformat

    assignment = Path(path).stem
    text = jupytext.read(path, fmt="py:percent")
    cells, seen = [], set()
    for index, cell in enumerate(text.cells):
        meta = dict(cell.metadata)
        role, cell_id, points = meta.pop("nbgrader", None), meta.pop("id", None), meta.pop("points", None)
        meta.pop("lines_to_next_cell", None)
        where = f"{path}, cell {index + 1}"
        if role is not None and role not in ROLES:
            raise ValueError(f"{where}: nbgrader={role!r}; use one of {ROLES}")
        if role is not None and (cell_id is None or not ID_PATTERN.match(cell_id)):
            raise ValueError(f"{where}: an nbgrader cell needs id=\"...\" matching {ID_PATTERN.pattern}")
        if (points is not None) != (role == "tests"):
            raise ValueError(f"{where}: points=N goes on tests cells, and every tests cell has points")
        if cell_id is None:
            cell_id = f"cell-{index}"
        if cell_id in seen:
            raise ValueError(f"{where}: id {cell_id!r} is used twice")
        seen.add(cell_id)
        if role is not None:
            meta["nbgrader"] = _nbgrader_metadata(role, cell_id, cell.cell_type, points)
        new = (nbformat.v4.new_markdown_cell if cell.cell_type == "markdown" else nbformat.v4.new_code_cell)(
            cell.source, metadata=meta, id=cell_id)
        cells.append(new)
    _check_exercises(path, assignment, cells)
    nb = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    })
    nb.nbformat_minor = 5
    nbformat.validate(nb)
    return nb


def _nbgrader_metadata(role, cell_id, cell_type, points):
    meta = {"cell_type": cell_type, "grade": role == "tests", "grade_id": cell_id, "locked": role != "solution",
            "schema_version": 3, "solution": role == "solution", "task": False}
    if role == "tests":
        meta["points"] = points
    return meta


def _check_exercises(path, assignment, cells):
    roles = [(c.id, c.metadata.get("nbgrader", {})) for c in cells]
    for i, (cell_id, meta) in enumerate(roles):
        if meta.get("solution"):
            tests = [j for j, (other, m) in enumerate(roles) if other == f"{cell_id}-tests" and m.get("grade")]
            if not tests or tests[0] < i:
                raise ValueError(f"{path}: solution cell {cell_id!r} needs a tests cell "
                                 f"id=\"{cell_id}-tests\" after it")
            for marker in ("### BEGIN SOLUTION", "### END SOLUTION"):
                if marker not in cells[i].source:
                    raise ValueError(f"{path}: solution cell {cell_id!r} has no {marker!r}")
            if "### BEGIN HIDDEN TESTS" not in cells[tests[0]].source:
                raise ValueError(f"{path}: tests cell {cell_id}-tests has no hidden tests")
        if meta.get("grade") and not cell_id.endswith("-tests"):
            raise ValueError(f"{path}: tests cell {cell_id!r}: name it <solution id>-tests")


def notebook_json(nb):
    """The exact text written to disk (stable, so a test can compare it)."""
    import nbformat
    return nbformat.writes(nb) + "\n"


def build_sources(course_dir=NOTEBOOKS, check=False):
    """Write (or, with ``check``, compare) ``source/<a>/<a>.ipynb`` for every
    text source. Returns the list of notebooks that were out of date."""
    course_dir = Path(course_dir)
    stale = []
    for assignment in assignments(course_dir):
        text = course_dir / "source_text" / assignment / f"{assignment}.py"
        target = course_dir / "source" / assignment / f"{assignment}.ipynb"
        wanted = notebook_json(notebook_from_text(text))
        if not target.is_file() or target.read_text() != wanted:
            stale.append(target)
            if not check:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(wanted)
    return stale


# ---- the student edition -------------------------------------------------------------------------------------------

def exercise_regions(source):
    """``[(exercise, first_line, last_line, text)]`` for every marked region of a
    module's source (line numbers 1-based, markers included)."""
    regions, start, lines = [], None, source.splitlines()
    for number, line in enumerate(lines, 1):
        begin = BEGIN_EXERCISE.match(line)
        if begin:
            if start is not None:
                raise ValueError(f"line {number}: BEGIN EXERCISE inside the region opened on line {start[0]}")
            start, indent = (number, begin["id"]), begin["indent"]
        elif start is not None and line.strip() and not line.startswith(indent):
            raise ValueError(f"line {number}: the region BEGIN EXERCISE {start[1]} (line {start[0]}) runs out of "
                             "its function body: a region holds the statements of one function body")
        elif END_EXERCISE.match(line):
            if start is None:
                raise ValueError(f"line {number}: END EXERCISE without BEGIN EXERCISE")
            regions.append((start[1], start[0], number, "\n".join(lines[start[0]:number - 1])))
            start = None
    if start is not None:
        raise ValueError(f"line {start[0]}: BEGIN EXERCISE {start[1]} is never closed")
    return regions


def stub_exercises(source, notebook_of=None):
    """``source`` with each marked region replaced by one ``raise NotImplementedError``.

    A region must hold the statements of a function body (the stub is a
    statement at the BEGIN line's indentation), so that importing the module,
    and everything that does not call the stubbed function, keeps working.
    """
    out, skipping = [], False
    for line in source.splitlines(keepends=True):
        begin = BEGIN_EXERCISE.match(line.rstrip("\n"))
        if begin:
            where = notebook_of(begin["id"]) if notebook_of else None
            message = f"Exercise {begin['id']}: " + (f"you write this in the notebook {where}." if where else
                                                     "you write this in its exercise notebook.")
            out.append(f"{begin['indent']}raise NotImplementedError({message!r})\n")
            skipping = True
        elif END_EXERCISE.match(line.rstrip("\n")):
            skipping = False
        elif not skipping:
            out.append(line)
    return "".join(out)


def write_student_package(dest, package=PACKAGE, course_dir=NOTEBOOKS):
    """Copy ``package`` to ``dest``, stubbing every exercise region. Returns the
    exercises that were stubbed, ``{exercise: [relative paths]}``."""
    names = {number(a): a for a in assignments(course_dir)}
    prefix = lambda exercise: exercise.split(".")[0]  # noqa: E731
    notebook_of = lambda exercise: (f"{names[prefix(exercise)]}/{names[prefix(exercise)]}.ipynb"  # noqa: E731
                                    if prefix(exercise) in names else None)
    package, dest = Path(package), Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(package, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    stubbed = {}
    for path in sorted(dest.rglob("*.py")):
        source = path.read_text()
        regions = exercise_regions(source)
        if regions:
            path.write_text(stub_exercises(source, notebook_of))
            for exercise, *_ in regions:
                stubbed.setdefault(exercise, []).append(str(path.relative_to(dest.parent)))
    return stubbed


def nbgrader_env():
    """The environment nbgrader needs: this interpreter's bin/ first on PATH (nbgrader runs
    ``alembic`` from there) and Jupyter looking in this environment for the python3 kernel."""
    env = dict(os.environ)
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    env["JUPYTER_PATH"] = str(Path(sys.prefix) / "share" / "jupyter")
    return env


def _nbgrader(*args, cwd):
    """Run an nbgrader command in a course directory; its output on failure."""
    result = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, capture_output=True, text=True,
                            env=nbgrader_env())
    if result.returncode != 0:
        raise RuntimeError(f"nbgrader {' '.join(args)} failed in {cwd}:\n{result.stdout}\n{result.stderr}")
    return result


def generate_assignments(course_dir=NOTEBOOKS, names=None, log=None):
    """``nbgrader generate_assignment`` for each assignment (into ``<course>/release``); ``log(line)`` hears
    each one as it starts."""
    names = names or assignments(course_dir)
    for k, assignment in enumerate(names, 1):
        if log:
            log(f"[{k}/{len(names)}] nbgrader generate_assignment {assignment}")
        _nbgrader("generate_assignment", assignment, "--force", cwd=course_dir)


def release_student_edition(dest, course_dir=NOTEBOOKS, package=PACKAGE, log=None):
    """Generate every assignment and release the student edition into ``dest``
    (see ``write_student_edition``). ``log(line)`` hears what changed in ``dest``.

    The text sources must be up to date with ``source/`` (``build_sources``).
    """
    course_dir = Path(course_dir)
    stale = build_sources(course_dir, check=True)
    if stale:
        raise RuntimeError(f"out of date, run notebooks/build_sources.py: {[str(p) for p in stale]}")
    names = assignments(course_dir)
    generate_assignments(course_dir, names, log=log)
    if log:
        log(f"writing the student edition into {dest} (chibigrad with its exercises stubbed, Lab's settings)")
    write_student_edition(dest, names, course_dir / "release", course_dir, package, log=log)
    return Path(dest)


def write_student_edition(dest, names, release_dir, course_dir=NOTEBOOKS, package=PACKAGE, make_zip=False, log=None):
    """Everything a student gets, staged in a fresh folder, then installed into ``dest`` without losing work:

    - ``<assignment>/<assignment>.ipynb``: the released notebooks of ``names`` (from ``release_dir``, where
      ``nbgrader generate_assignment`` wrote them: solutions stubbed, hidden tests removed);
    - ``chibigrad/``: the package with every exercise region stubbed;
    - ``pyproject.toml``, ``requirements.txt``, ``nbgrader_config.py`` (for the Validate button),
      ``README.md``, and ``.jupyter/`` (Lab's configuration: Validate, none of the instructor's tools).

    With ``make_zip``, ``dest.zip`` holds the staged edition as released. Returns the archive or None.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".staging-") as tmp:
        staged = Path(tmp) / dest.name
        staged.mkdir()
        for assignment in names:
            shutil.copytree(Path(release_dir) / assignment, staged / assignment)
        write_student_package(staged / "chibigrad", package, course_dir)
        (staged / "requirements.txt").write_text(_student_requirements())
        (staged / "pyproject.toml").write_text(STUDENT_PYPROJECT)
        (staged / "nbgrader_config.py").write_text(STUDENT_NBGRADER_CONFIG)
        (staged / "README.md").write_text(STUDENT_README.format(assignments="\n".join(
            f"- `{a}/{a}.ipynb`" for a in names)))
        write_lab_config(staged / LAB_CONFIG)
        (staged / MANIFEST).write_text(json.dumps(_hashes(staged), indent=1, sort_keys=True) + "\n")
        archive = None
        if make_zip:
            archive = Path(shutil.make_archive(str(dest), "zip", root_dir=tmp, base_dir=dest.name))
        lines = list(install_edition(staged, dest))
    if log:
        added = [line for line in lines if line.startswith("added ") and not line.endswith(".ipynb")]
        for line in lines:
            if line not in added or len(added) <= 5:
                log(line)
        if len(added) > 5:
            log(f"added {len(added)} other files (chibigrad/, README.md, ...)")
    return archive


def _sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _hashes(folder):
    """``{relative path: sha256}`` of every file under ``folder`` but the manifest."""
    folder = Path(folder)
    return {str(p.relative_to(folder)): _sha256(p) for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != MANIFEST}


def beside_name(path, digest):
    """Where a new release of ``path`` goes when the student changed ``path``: ``01_graphs.release-1a2b3c4d.ipynb``."""
    path = Path(path)
    suffix = "".join(path.suffixes[-1:])
    return path.with_name(f"{path.name[:len(path.name) - len(suffix)]}.release-{digest[:8]}{suffix}")


def install_edition(staged, dest):
    """Copy the edition in ``staged`` into ``dest`` and yield one line per change. Never deletes a file and never
    overwrites one the student changed: a file is added when ``dest`` lacks it, replaced only when it is byte for
    byte what the last release wrote there (recorded in ``dest/.release.json``), and otherwise kept, with the new
    version written beside it (``beside_name``) unless the release of that file is the same as last time.
    Without a record every differing file counts as changed."""
    staged, dest = Path(staged), Path(dest)
    record = dest / MANIFEST
    try:
        released = json.loads(record.read_text()) if record.is_file() else {}
    except ValueError:
        released = {}
    released = released if isinstance(released, dict) else {}
    new, kept = {}, []
    for rel, digest in _hashes(staged).items():
        source, target = staged / rel, dest / rel
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
            new[rel] = digest
            yield f"added {rel}"
        elif not target.is_file():
            kept.append(rel)
            yield f"kept {rel}: it is not a file here; the new release was not written"
        else:
            now = _sha256(target)
            if now == digest:
                new[rel] = digest
            elif released.get(rel) == now:  # unchanged since the last release: safe to update
                shutil.copy2(source, target)
                new[rel] = digest
                yield f"updated {rel}"
            elif released.get(rel) != digest:  # changed by the student, and the release changed too
                beside = beside_name(target, digest)
                if not beside.exists():
                    shutil.copy2(source, beside)
                    if beside.suffix == ".ipynb":  # a note in the folder where the student opens the notebook
                        beside.with_suffix(".md").write_text(NEW_RELEASE_NOTE.format(mine=target.name, new=beside.name))
                kept.append(rel)
                yield f"kept your {rel} (you changed it); the new release is beside it: {beside.relative_to(dest)}"
            # else: changed by the student, released as before: nothing to say
    record.write_text(json.dumps({**released, **new}, indent=1, sort_keys=True) + "\n")
    if kept:
        yield (f"{len(kept)} file(s) you changed were left as they are; compare each with the .release-* file "
               "beside it and copy over what you want.")


NEW_RELEASE_NOTE = """\
# A new release of {mine}

Your `{mine}` is kept as you left it, since you had changed it. The new release of the assignment is
`{new}`, beside it. Open both and copy what you want from one to the other (your answers into the new
release, or its changed cells into yours). Nothing of yours was deleted or overwritten.
"""


def write_lab_config(folder):
    """A Jupyter configuration directory (``JUPYTER_CONFIG_DIR``) for students: nbgrader's Validate button and
    nothing of the instructor's (formgrader, create-assignment, course and assignment lists), no news popup, no
    Extension Manager (it offers to install packages), no Jupytext entries in the Launcher and File menu, and
    ``nbgrader_config.py`` (Validate reads it) left out of the file browser."""
    folder = Path(folder)
    (folder / "labconfig").mkdir(parents=True, exist_ok=True)
    (folder / "labconfig" / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {name: True for name in STUDENT_LAB_DISABLED}}, indent=1) + "\n")
    (folder / "jupyter_server_config.json").write_text(json.dumps(
        {"ServerApp": {"jpserver_extensions": STUDENT_SERVER_EXTENSIONS},
         "ContentsManager": {"hide_globs": STUDENT_HIDDEN_FILES}}, indent=1) + "\n")


STUDENT_LAB_DISABLED = [
    "@jupyter/nbgrader:menu", "@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:course-list", "@jupyter/nbgrader:assignment-list",
    "@jupyterlab/apputils-extension:announcements", "@jupyterlab/extensionmanager-extension",
    "jupyterlab-jupytext",
]
# jupyter_server's ContentsManager.hide_globs (its defaults, then ours): files the file browser does not list.
STUDENT_HIDDEN_FILES = ["__pycache__", "*.pyc", "*.pyo", ".DS_Store", "*~", "nbgrader_config.py"]
STUDENT_SERVER_EXTENSIONS = {
    "nbgrader.server_extensions.validate_assignment": True,
    "nbgrader.server_extensions.formgrader": False,
    "nbgrader.server_extensions.assignment_list": False,
    "nbgrader.server_extensions.course_list": False,
}


# ---- self-study: grading one finished notebook with the hidden tests ----------------------------------------------

def skip_unused_grammar():
    """Importing nbformat imports jsonschema, which compiles an RFC 3987 grammar (``rfc3987_syntax``, 1.9 s of a
    grade's 13 s here) for the ``iri`` string formats when it can import that package; no notebook schema has a
    format, so grading tells Python that package is not there (jsonschema then leaves those formats out)."""
    sys.modules.setdefault("rfc3987_syntax", None)


def self_grade(notebook, assignment=None, course_dir=NOTEBOOKS):
    """Grade one student notebook as an instructor grades a class of one: ``nbgrader autograde`` with the hidden
    tests, in a temporary copy of the assignment's release (``nbgrader generate_assignment``, cached by
    :func:`self_grade_release`), in this process. The notebook itself is only read.
    Returns ``(assignment, [(exercise, score, max_score, message or "")])``."""
    import nbformat
    from nbgrader.api import Gradebook
    notebook, course_dir = Path(notebook), Path(course_dir)
    if assignment is None:  # from the file's name (01_graphs.ipynb, 01_graphs-mine.ipynb) or its folder's
        found = [a for a in assignments(course_dir) if notebook.stem.startswith(a) or notebook.parent.name == a]
        assignment = found[0] if len(found) == 1 else None
    if assignment not in assignments(course_dir):
        raise SystemExit(f"{notebook}: which assignment is it? Its name should be one of {assignments(course_dir)} "
                         "(.ipynb), or say --assignment NAME")
    data = notebook.read_bytes()
    release = self_grade_release(assignment, course_dir)
    with tempfile.TemporaryDirectory(prefix="chibigrad-self-grade-") as tmp:
        copy = Path(tmp) / "course"
        shutil.copytree(release, copy)  # the gradebook, source and release as generate_assignment left them
        submitted = copy / "submitted" / "me" / assignment / f"{assignment}.ipynb"
        submitted.parent.mkdir(parents=True)
        submitted.write_bytes(data)
        _nbgrader_here("autograde", assignment, "me", course=copy)
        graded = nbformat.read(copy / "autograded" / "me" / assignment / f"{assignment}.ipynb", as_version=4)
        messages = {}
        for cell in graded.cells:
            for output in cell.get("outputs", []):
                if output.output_type == "error":
                    messages.setdefault(cell.id, f"{output.ename}: {output.evalue}")
                elif output.output_type == "stream" and output.name == "stderr":
                    messages.setdefault(cell.id, f"wrote to stderr: {output.text.strip()[:300]}")
                elif output.get("data", {}).get("text/plain", "").startswith("NOT GRADED HERE"):
                    messages.setdefault(cell.id, output.data["text/plain"])
        with Gradebook(f"sqlite:///{copy / 'gradebook.db'}") as gb:
            grades = gb.find_submission_notebook(assignment, assignment, "me").grades
            order = [c.id for c in graded.cells]
            rows = [(g.name[:-len("-tests")], None if _not_graded(g) else g.score, g.max_score,
                     messages.get(g.name, ""))
                    for g in sorted(grades, key=lambda g: order.index(g.name) if g.name in order else len(order))]
    return assignment, rows


SELF_GRADE_CACHE = ROOT / "_build" / "self-grade"


def self_grade_release(assignment, course_dir=NOTEBOOKS):
    """A course folder holding ``assignment``'s source, its release and the gradebook ``nbgrader
    generate_assignment`` left: made once per version of what it is made from (the source folder, the
    course's ``nbgrader_config.py``, the release's preprocessors, nbgrader's version) and kept in
    ``_build/self-grade/`` under their hash. Read-only to its users: ``self_grade`` grades in a copy."""
    import nbgrader
    course_dir = Path(course_dir)
    inputs = [course_dir / "nbgrader_config.py", Path(__file__).resolve().parent / "nbgrader_plugins.py",
              *sorted(p for p in (course_dir / "source" / assignment).rglob("*") if p.is_file())]
    digest = hashlib.sha256(nbgrader.__version__.encode())
    for path in inputs:
        digest.update(str(path.relative_to(course_dir) if path.is_relative_to(course_dir) else path.name).encode())
        digest.update(path.read_bytes())
    folder = SELF_GRADE_CACHE / f"{assignment}-{digest.hexdigest()[:16]}"
    if folder.is_dir():
        return folder
    SELF_GRADE_CACHE.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{assignment}-staging-", dir=SELF_GRADE_CACHE))
    shutil.copy(course_dir / "nbgrader_config.py", staging)
    shutil.copytree(course_dir / "source" / assignment, staging / "source" / assignment)
    try:
        _nbgrader_here("generate_assignment", assignment, course=staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    for old in SELF_GRADE_CACHE.glob(f"{assignment}-*"):  # an older version's: never read again
        shutil.rmtree(old, ignore_errors=True)
    try:
        staging.rename(folder)
    except OSError:  # another process made it first
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def _nbgrader_here(command, assignment, student=None, course=NOTEBOOKS):
    """``nbgrader generate_assignment`` or ``autograde`` in this process (no interpreter start, no second import
    of nbgrader), with the course folder's ``nbgrader_config.py``; its log on failure."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.CourseDirectory.root = str(course)
    env = nbgrader_env()
    saved = {name: os.environ.get(name) for name in ("PATH", "JUPYTER_PATH")}
    os.environ.update({name: env[name] for name in saved})  # the kernel: this interpreter's python3
    with tempfile.TemporaryFile() as printed, _output_to(printed), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SQLAlchemy's about nbgrader's sessions; the kernel's go to `printed`
        try:
            api = NbGraderAPI(CourseDirectory(config=config), config=config)
            result = (api.generate_assignment(assignment, force=True) if command == "generate_assignment"
                      else api.autograde(assignment, student, force=True))
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        printed.seek(0)
        if not result["success"]:
            raise RuntimeError(f"nbgrader {command} {assignment} failed in {course}:\n{result.get('log', '')}\n"
                               f"{result.get('error', '')}\n{printed.read().decode(errors='replace')[-5000:]}")
    return result


@contextlib.contextmanager
def _output_to(file):
    """File descriptors 1 and 2 (this process's and its children's: the kernel's) go to ``file`` meanwhile,
    as a subprocess's captured output would."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        os.dup2(file.fileno(), 1)
        os.dup2(file.fileno(), 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, copy in zip((1, 2), saved):
            os.dup2(copy, fd)
            os.close(copy)


def _not_graded(grade):
    """A grade the judge left blank (``judge.NotGraded``: no auto score, no manual one yet)."""
    return grade.auto_score is None and grade.manual_score is None and grade.needs_manual_grade


def format_self_grade(notebook, assignment, rows):
    """The table ``make grade`` prints; an exercise that could not be graded here is blank and said once."""
    width = max(len(name) for name, *_ in rows)
    lines = [f"{notebook}: {assignment} graded with its hidden tests (as an instructor grades a class of one)"]
    for name, score, top, message in rows:
        if score is None:
            lines.append(f"  {name:{width}}  -- / {top:g}   not graded here")
            continue
        lines.append(f"  {name:{width}}  {score:g} / {top:g}" + (f"   {message.splitlines()[0][:300]}" if message and
                                                                  score < top else ""))
    graded = [r for r in rows if r[1] is not None]
    total, top = sum(r[1] for r in graded), sum(r[2] for r in graded)
    lines.append(f"  {'total':{width}}  {total:g} / {top:g}" + (" (of the exercises graded here)"
                                                                if len(graded) < len(rows) else ""))
    for name, score, top, message in rows:
        if score is None:
            lines.append(f"*** NOT GRADED: {name} ({top:g} points): {message or 'not gradable on this machine'} ***")
    lines.append("Your notebook was only read, not changed.")
    return "\n".join(lines)


def _student_requirements():
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            pins[line.split("==")[0].lower()] = line
    return "".join(pins[name] + "\n" for name in STUDENT_REQUIREMENTS)


STUDENT_PYPROJECT = """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "chibigrad-student"
version = "0.1.0"
description = "chibigrad, student edition: the answers to the graded exercises are yours to write."
requires-python = ">=3.11"
dependencies = ["numpy>=1.24"]

[tool.setuptools.packages.find]
include = ["chibigrad*"]
"""

STUDENT_NBGRADER_CONFIG = """\
# Used by JupyterLab's "Validate" button (nbgrader reads the config in the directory Lab started in).
c = get_config()  # noqa: F821
c.Execute.timeout = 60
c.Execute.raise_on_iopub_timeout = False
"""

STUDENT_README = """\
# chibigrad course: the exercises

One graded notebook per chapter of the book. In each you write a piece of chibigrad and tests plug it
into the real engine.

{assignments}

## Set up (once)

With Python 3.11, 3.12 or 3.13:

    python3 -m venv .venv
    .venv/bin/pip install -r requirements.txt
    .venv/bin/pip install -e .

`chibigrad/` here is the student edition: the code that answers an exercise is replaced by
`raise NotImplementedError("Exercise NN.name: ...")`; everything else works.

## Work

    JUPYTER_CONFIG_DIR=.jupyter .venv/bin/jupyter lab

(Windows PowerShell: `$env:JUPYTER_CONFIG_DIR=".jupyter"; .venv\\Scripts\\jupyter lab`.) `.jupyter/` is this
course's Lab configuration: the Validate button, without the instructor's tools. Add `--no-browser` to open
the printed address yourself, `--port 8890` for another port.

1. Open a notebook and run it from the top (Run > Run All Cells).
2. Replace each `raise NotImplementedError("Exercise ...")` in a solution cell with your code.
3. Run the test cell under it. No output means the visible tests pass; an `AssertionError`
   says what is wrong. Do not edit test cells: they are restored before grading.
4. Click **Validate** in the notebook's toolbar: it restarts the kernel, runs everything and
   lists the test cells that fail.

## Submit

Hand in the `.ipynb` files as your course asks (keep their names). Grading runs the same
notebook with extra hidden tests (edge cases, random and very deep graphs, float64 gradient
checks), so pass the visible tests *and* think about the cases they do not show. A test cell
that writes anything to stderr (a warning, for example) scores 0.

## A new release

Releasing again into this folder (`make lab` or `make release` in the course repository) adds new
notebooks and updates the files you have not changed. A file you changed is never overwritten: the new
version arrives beside it as `<name>.release-<hash>.<ext>` and the command lists it. `.release.json`
records what was released.
"""


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m autograder.build", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="write notebooks/source/*/*.ipynb from notebooks/source_text")
    build.add_argument("--check", action="store_true", help="only report notebooks that are out of date")
    release = sub.add_parser("release", help="write the student edition")
    release.add_argument("dest", nargs="?", default=str(ROOT / "build" / "student"))
    grade = sub.add_parser("grade", help="self-study: grade one finished notebook with the hidden tests")
    grade.add_argument("notebook", help="e.g. build/student/01_graphs/01_graphs.ipynb (only read)")
    grade.add_argument("--assignment", help="the assignment, if the file is named otherwise")
    args = parser.parse_args(argv)
    if args.command == "grade":
        skip_unused_grammar()
        name, rows = self_grade(args.notebook, args.assignment)
        print(format_self_grade(args.notebook, name, rows))
        return 0
    if args.command == "build":
        stale = build_sources(check=args.check)
        for path in stale:
            print(("out of date: " if args.check else "wrote ") + str(path.relative_to(ROOT)))
        return 1 if args.check and stale else 0
    dest = release_student_edition(args.dest, log=functools.partial(print, flush=True))  # as it goes, under make
    print(f"student edition up to date in {dest} (nothing of yours was deleted or overwritten)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
