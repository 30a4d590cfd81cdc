"""The judge: hidden tests that run in the grading process, never in the process that runs the student's code.

An assignment is *judged* when ``autograder/grading/exercises/a<assignment>.py`` exists. Its hidden checks
are functions registered with :func:`exercise`; each gets a :class:`Student` (calls into the student
process) and returns normally or raises ``AssertionError`` with a message for the student::

    @exercise("01b_engine:backward_order")
    def backward_order(student):
        for seed in range(8):
            case = {"recipe": "random_graph", "seed": seed, "pass": "root"}
            got = student.call("backward_order", case, observe="node_ids")
            expect_order(got, case, f"backward_order on random graph (seed {seed})")

A check earns all its cell's points or none, unless it names cases: ``with student.case("deep graph", points=1):``
around a part of the check makes a failure inside it cost that case's share only (partial credit, see
:meth:`Student.case`).

The kernel that runs the notebook is the student process (``runner`` answers there); the judge is the
nbgrader process around it (``JudgedExecute``, or the worker's ``SandboxedExecute``). After a test cell's
visible asserts ran in the kernel, the judge runs that exercise's check and, if it fails, appends the
judge's error to the cell: nbgrader scores the cell 0. Whatever the student process printed or raised, only
the judge's verdict adds that error, and the verdict comes from answers computed here, from recipes, with
the full chibigrad: the student process receives inputs, never expected values, and what it returns is
decoded as plain data (``protocol``), never run or unpickled.

The kernel imports a *student lib* (:func:`student_lib`): the student edition of chibigrad (exercise answers
stubbed) and only ``runner``, ``protocol`` and ``cases`` of this package, ahead of everything else on its path.
"""
import contextlib
import functools
import hashlib
import importlib
import os
import queue
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute, SaveAutoGrades
from nbclient.util import ensure_async, run_sync

from . import protocol, rules, sandbox

EXERCISES = Path(__file__).resolve().parent / "exercises"
# what the student process may import of the grader; importing anything else is an integrity.csv row
STUDENT_MODULES = ["autograder", "autograder.grading", "autograder.grading.runner", "autograder.grading.protocol",
                   "autograder.grading.cases"]
RUNNER_MODULES = ("__init__.py", "grading/__init__.py", "grading/runner.py", "grading/protocol.py", "grading/cases.py")
DEFAULT_TIMEOUT = 10.0  # seconds a single call may take
_REGISTRY = {}
_RULES = {}  # "<assignment>:<exercise id>" -> the rules on its source (``rules.broken_rules``'s keywords)
JUDGE_SAW = "the judge saw"  # integrity.csv lists the notes that say it
NOT_GRADED = "judge_not_graded"  # resources key: {grade_id: why} of cells whose points stay blank
PARTIAL = "judge_partial"  # resources key: {grade_id: (points earned, the verdict's message)} of partial credit


class NotGraded(Exception):
    """Raised by a check whose points cannot be decided on this machine (a GPU-only exercise without a real
    GPU): the cell's points are recorded as not graded (blank), never 0 and never full."""


def exercise(key, forbids=(), no_recursion=False):
    """Register ``check(student)`` as the hidden check of ``"<assignment>:<exercise id>"``. ``forbids``: names
    of the library's implementation of the exercise; ``no_recursion``: the exercise forbids recursion. Both are
    rules on the notebook's source, which the judge reads as data (``rules``): breaking one scores the cell 0."""
    def register(check):
        _REGISTRY[key] = check
        if forbids or no_recursion:
            _RULES[key] = {"forbids": tuple(forbids), "no_recursion": no_recursion}
        return check
    return register


def judged(assignment):
    """Whether ``assignment``'s hidden tests are the judge's (its exercises module exists)."""
    return (EXERCISES / f"a{assignment}.py").is_file()


def check_for(assignment, exercise_id):
    """The registered check of an exercise, or None when the assignment is not judged."""
    if not judged(assignment):
        return None
    importlib.import_module(f"autograder.grading.exercises.a{assignment}")
    return _REGISTRY.get(f"{assignment}:{exercise_id}")


def rules_for(assignment, exercise_id):
    """The rules an exercise declared on its source (``exercise``'s keywords), ``{}`` when none."""
    return _RULES.get(f"{assignment}:{exercise_id}", {}) if check_for(assignment, exercise_id) else {}


def assignment_rules(assignment):
    """Whether any exercise of a judged assignment declares rules on its source."""
    if not judged(assignment):
        return False
    importlib.import_module(f"autograder.grading.exercises.a{assignment}")
    return any(key.startswith(f"{assignment}:") for key in _RULES)


def expect(condition, message):
    """``assert`` that survives ``python -O``: the message is what the student reads."""
    if not condition:
        raise AssertionError(message)


def expect_array(got, expected, what, tol=1e-8):
    """``got`` is an array with ``expected``'s shape and values; the message shows both."""
    expected = np.asarray(expected, dtype=np.float64)
    expect(got is not None, f"{what}: got None, expected {expected.tolist()}")
    try:
        got = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        raise AssertionError(f"{what}: expected an array, got {type(got).__name__}") from None
    expect(got.shape == expected.shape, f"{what}: shape {got.shape}, expected {expected.shape}")
    if not np.allclose(got, expected, rtol=tol, atol=tol):
        wrong = np.argwhere(~np.isclose(got, expected, rtol=tol, atol=tol))
        first = tuple(int(i) for i in wrong[0])
        show = {"threshold": 20, "edgeitems": 2}
        raise AssertionError(f"{what}: wrong values at {len(wrong)} of {got.size} positions; the first, {first}: "
                             f"got {got[first]:.6g}, expected {expected[first]:.6g}\n got:\n"
                             f"{np.array2string(got, **show)}\n expected:\n{np.array2string(expected, **show)}")


def kernel_memory(pid):
    """``(peak address space, its cap)`` in bytes of a running process, read from outside it (``/proc``: what it
    does inside, catching its own MemoryError included, cannot change them); ``(None, None)`` where unreadable,
    the cap None where unlimited."""
    return sandbox.address_space(pid, "VmPeak")


def reached_cap(peak, cap, watched=False):
    """Whether a peak address space shows the cap refused allocations: it cannot pass the cap, and a refused
    one leaves it within the size of that allocation below. A ``watched`` kernel's refused calls are the
    allocation watcher's to report (``sandbox.watch_allocations``): left is a stack's growth, at most its limit;
    without the watcher, refusals of up to an eighth of the cap (a larger one leaves the peak low, unseen)."""
    if not (peak and cap):
        return False
    return peak >= cap - (sandbox.STACK_BYTES if watched else cap * sandbox.CAP_MARGIN)


class Student:
    """The student process, seen from the judge: ``call`` a notebook function on a case, get plain data."""

    def __init__(self, transport, setup=""):
        self._transport, self._setup = transport, setup
        self.calls = 0
        self.suspicious = []  # what integrity.csv should list: answers outside the protocol, cases that broke
        self.cases = []  # (name, points, failure message or None) of the named cases run, in order
        self._stopped = None  # why the student process can no longer answer (a timeout, a dead kernel)

    @contextlib.contextmanager
    def case(self, name, points=1):
        """A named case worth ``points`` (weights: the cell's points are shared out in their proportion): an
        AssertionError inside fails this case only and the check goes on with the next (like unittest's
        ``subTest``). The cell earns the points of the cases that passed; the feedback lists every case."""
        try:
            yield
        except AssertionError as err:
            self.cases.append((name, points, str(err)))
        else:
            self.cases.append((name, points, None))

    def call(self, name, case, observe="value", timeout=DEFAULT_TIMEOUT, what=None):
        """What ``observe`` read of ``name`` called on ``case``; an AssertionError naming the case (``what``)
        if it raised, recursed too deep, warned, timed out or answered outside the protocol."""
        what = what or f"{name} on {describe(case)}"
        if self._stopped:  # later cases fail at once: a check's time stays bounded by one timeout
            raise AssertionError(f"{what}: not run: {self._stopped}")
        request = protocol.Call(name=name, case=case, observe=observe, setup=self._setup)
        self.calls += 1
        text, problem = self._transport(request.to_json(), timeout)
        if problem:
            self._stopped = f"an earlier call failed ({problem.split(' (')[0]})"
            raise AssertionError(f"{what}: {problem}")
        try:
            reply = protocol.Reply.from_json(text)
        except protocol.ProtocolError as err:
            self.suspicious.append(f"an answer outside the grading protocol ({err})")
            raise AssertionError(f"{what}: the notebook's process answered outside the grading protocol ({err})") \
                from None
        if reply.error == "RecursionError":
            raise AssertionError(f"{what}: RecursionError. Graphs built by loops are far deeper than Python's "
                                 "recursion limit (1000); walk them with an explicit stack (a list) instead of "
                                 "recursive calls.")
        if reply.error == "CaseError":
            self.suspicious.append(f"the release's setup no longer builds the cases ({reply.message[:200]})")
        if not reply.ok:
            raise AssertionError(f"{what} raised {reply.error}: {reply.message}")
        if reply.warning:
            raise AssertionError(f"{what} emitted a warning ({reply.warning}); a warning goes to stderr and a "
                                 "graded cell that writes to stderr scores 0.")
        return reply.value


def describe(case):
    """A case in the student's terms, for messages (never the expected answer: the judge does not send it)."""
    kind = case.get("recipe")
    if kind == "random_graph":
        return f"random graph (seed {case['seed']})"
    if kind == "chain":
        return f"a chain of {case['n']:,} products"
    if kind == "squarings":
        return f"{case['k']} squarings ({2 ** case['k']:,} paths)"
    return case.get("what", kind)


# ---- running the judge between the kernel's cells ------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def student_lib():
    """A folder with the student edition of chibigrad and the runner's modules, compiled: kept in the temp
    folder under a hash of what it is made from, so only the first grading after a change builds it."""
    import compileall
    from .. import build
    package = Path(__file__).resolve().parent.parent
    sources = sorted(Path(build.PACKAGE).rglob("*.py")) + [package / name for name in RUNNER_MODULES] + \
        [package / "build.py"]
    digest = hashlib.sha256()
    for path in sources:
        digest.update(str(path.relative_to(package.parent)).encode())
        digest.update(path.read_bytes())
    folder = Path(tempfile.gettempdir()) / f"chibigrad-student-lib-{digest.hexdigest()[:16]}"
    if folder.is_dir():
        return folder
    staging = Path(tempfile.mkdtemp(prefix="chibigrad-student-lib-staging-"))
    build.write_student_package(staging / "chibigrad")
    for name in RUNNER_MODULES:
        target = staging / "autograder" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(package / name, target)
    compileall.compile_dir(str(staging), quiet=1)
    try:
        staging.rename(folder)
    except OSError:  # another process built it first
        shutil.rmtree(staging, ignore_errors=True)
    return folder


MESSAGE_LINES, MESSAGE_CHARS = 12, 1500  # a failed case reads in a glance: its first differences, not a dump


def brief(message):
    """``message`` cut to its first lines (and characters, at a line's end where one is near), saying how
    much was left out."""
    lines = message.split("\n")
    kept = "\n".join(lines[:MESSAGE_LINES])
    if len(kept) > MESSAGE_CHARS:
        cut = kept.rfind("\n", 0, MESSAGE_CHARS)
        kept = kept[:cut if cut > MESSAGE_CHARS // 2 else MESSAGE_CHARS]
    left = len(message) - len(kept)
    return kept if left <= 0 else f"{kept}\n[... {left:,} more characters of this message not shown]"


def verdict_output(message):
    """The judge's failure as the error output nbgrader scores 0 (no frame of the judge in it)."""
    message = brief(message)
    return NotebookNode(output_type="error", ename="AssertionError", evalue=message,
                        traceback=[f"AssertionError: {message}"])


def score_cases(cases, max_points):
    """``(points earned, the table of cases the feedback shows, the failures' message or None)`` for the named
    cases a check ran (:meth:`Student.case`): the cell's ``max_points`` shared in proportion to their points."""
    total = sum(points for _, points, _ in cases)
    share = {name: max_points * points / total for name, points, _ in cases}
    earned = round(sum(share[name] for name, _, failure in cases if failure is None), 2)
    lines = [f"Hidden cases: {earned:g} of {max_points:g} points"]
    lines += [f"  {name}: {0 if failure else round(share[name], 2):g}/{round(share[name], 2):g}"
              for name, _, failure in cases]
    failed = [(name, failure) for name, _, failure in cases if failure]
    if not failed:
        return earned, "\n".join(lines), None
    (name, failure), more = failed[0], len(failed) - 1
    first, _, rest = failure.partition("\n")  # the reason on the first line: `make grade` prints only that one
    others = f"\n({more} more failed: their points are listed above)" if more else ""
    return earned, "\n".join(lines), f"hidden case {name!r} failed: {first}" + (rest and "\n" + rest) + others


class JudgeMixin:
    """For an Execute preprocessor: the kernel gets the student lib first on its path, and after a judged
    test cell ran in the kernel, the judge runs the exercise's check and fails the cell if it fails."""

    def preprocess(self, nb, resources=None, km=None):
        assignment = (resources or {}).get("nbgrader", {}).get("assignment", "")
        self._assignment = assignment if judged(assignment) else None
        self._setup = "\n".join(c.source for c in nb.cells if c.cell_type == "code" and
                                c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "setup")
        self.judged_cells = {}
        self._sources = rules.student_cells(nb) if self._assignment else []
        self._dynamic_noted = False
        self._kernel_peak, self._watched = None, None
        result = super().preprocess(nb, resources, km)
        if reached_cap(*(self._kernel_peak or (None, None)), watched=self._watched):
            peak, cap = self._kernel_peak
            self.judge_note(f"the grader stopped the kernel's allocations at its address-space cap, or nearly (peak "
                            f"{peak >> 20} MB of {cap >> 20} MB): the notebook may have run out of memory, whatever it "
                            "printed")
        return result

    def kernel_env(self):
        """The kernel's environment: for a judged assignment only the allowlisted variables
        (``sandbox.student_environment``) and the student lib ahead of anything on the path."""
        if not self._assignment:
            return dict(os.environ)
        return sandbox.student_environment(PYTHONPATH=str(student_lib()))

    async def async_start_new_kernel(self, **kwargs):
        kwargs.setdefault("env", self.kernel_env())
        return await super().async_start_new_kernel(**kwargs)

    start_new_kernel = run_sync(async_start_new_kernel)  # nbclient's sync wrapper is bound to its own method

    def preprocess_cell(self, cell, resources, index):
        cell, resources = super().preprocess_cell(cell, resources, index)
        self._read_kernel_memory()
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if not (self._assignment and grade_id.endswith("-tests") and cell.cell_type == "code"):
            return cell, resources
        check = check_for(self._assignment, grade_id[:-len("-tests")])
        if check is None or any(o.output_type == "error" for o in cell.outputs):
            return cell, resources  # the visible tests failed (or the kernel stopped): nothing to add
        self._note_dynamic_access()
        exercise_id = grade_id[:-len("-tests")]
        broken = rules.broken_rules(self._sources, exercise_id, **rules_for(self._assignment, exercise_id))
        if broken:
            for why in broken:
                self.judge_note(f"cell {grade_id}: {JUDGE_SAW} a rule of the exercise broken: the notebook {why}")
            cell.outputs.append(verdict_output("0 points: the notebook " + "; it ".join(broken) + ". The exercise's "
                                               "text states this rule; the judge reads your code, it does not run it."))
            self.judged_cells[grade_id] = {"ok": False, "calls": 0, "seconds": 0.0, "broken_rules": broken}
            return cell, resources
        begin = time.monotonic()
        student = Student(run_sync(self._async_ask), self._setup)
        try:
            check(student)
            message = None
        except NotGraded as why:
            return self._not_graded(cell, resources, grade_id, str(why))
        except AssertionError as err:
            message = str(err)
        except Exception as err:  # a fault of the judge's own: never points, and say so
            message = f"the grader's check failed ({type(err).__name__}: {err}); tell your instructor"
        if message is None and student.cases:
            points, table, message = score_cases(student.cases, float(cell.metadata["nbgrader"]["points"]))
            cell.outputs.append(NotebookNode(output_type="display_data", metadata={}, data={"text/plain": table}))
            if message:
                resources.setdefault(PARTIAL, {})[grade_id] = (points, brief(message))
        if message:
            cell.outputs.append(verdict_output(message))
        self.judged_cells[grade_id] = {"ok": message is None, "calls": student.calls,
                                       "seconds": round(time.monotonic() - begin, 3)}
        for problem in student.suspicious:
            self.judge_note(f"cell {grade_id}: {JUDGE_SAW} {problem}")
        return cell, resources

    def _read_kernel_memory(self):
        """Keep the kernel's peak address space and cap, read from outside after each cell (the peak only grows;
        the last reading before the kernel ends is the one that counts)."""
        pid = getattr(getattr(getattr(self, "km", None), "provisioner", None), "pid", None)
        peak, cap = kernel_memory(pid)
        if peak:
            self._kernel_peak = (peak, cap)
            if self._watched is None:
                self._watched = sandbox.allocation_watcher(pid) is not None

    def _note_dynamic_access(self):
        """Once per notebook of an assignment whose exercises have rules on their source: the ways its code
        reaches objects without naming them, which those rules cannot judge (integrity.csv, never scored)."""
        if self._dynamic_noted or not assignment_rules(self._assignment):
            return
        self._dynamic_noted = True
        found = rules.dynamic_access(self._sources)
        if found:
            self.judge_note(f"{JUDGE_SAW} code that reaches objects without naming them, which the source rules "
                            f"cannot judge (read it): {', '.join(found)}")

    def _not_graded(self, cell, resources, grade_id, reason):
        """Leave the cell's points blank (``JudgedSaveAutoGrades``) and tell the student why, once."""
        resources.setdefault(NOT_GRADED, {})[grade_id] = reason
        cell.outputs.append(NotebookNode(output_type="display_data", metadata={}, data={
            "text/plain": f"NOT GRADED HERE: {reason}. These points are left blank, not 0."}))
        self.judged_cells[grade_id] = {"ok": None, "not_graded": reason}
        return cell, resources

    def judge_note(self, text):
        """A sentence for the report and integrity.csv (the worker's preprocessor keeps it)."""
        self.log.warning(text)

    async def _async_ask(self, request, timeout):
        """Send one request to the runner in the kernel; ``(reply text, None)`` or ``(None, problem)``."""
        code = f"__import__('autograder.grading.runner', fromlist=['_']).serve({request!r})"
        msg_id = self.kc.execute(code, silent=True, store_history=False, allow_stdin=False)  # no hooks, no history
        deadline, reply, error = time.monotonic() + timeout, None, None
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                await ensure_async(self.km.interrupt_kernel())
                await self._drain(msg_id, 5.0)
                return None, f"took longer than {timeout:g} s (an endless loop, or a walk that visits shared " \
                             "nodes again and again?)"
            try:
                msg = await self.kc.iopub_channel.get_msg(timeout=min(left, 1.0))
            except queue.Empty:
                if not await ensure_async(self.km.is_alive()):
                    return None, "the notebook's kernel died during the call"
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "display_data" and protocol.MIME in content.get("data", {}):
                reply = content["data"][protocol.MIME]
            elif kind == "error":
                error = f"{content.get('ename')}: {content.get('evalue')}"
            elif kind == "status" and content.get("execution_state") == "idle":
                break
        if reply is None:
            return None, f"no answer from the notebook's process ({error or 'nothing came back'})"
        return reply, None

    async def _drain(self, msg_id, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                msg = await self.kc.iopub_channel.get_msg(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                return
            if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status" \
                    and msg["content"].get("execution_state") == "idle":
                return


class JudgedSaveAutoGrades(SaveAutoGrades):
    """nbgrader's SaveAutoGrades, except that a cell the judge could not grade here (``NotGraded``) gets no
    auto score and is marked as needing a grade: blank in the gradebook and the export, not 0; and a cell whose
    only error is the judge's verdict on named cases gets the points of the cases that passed."""

    def _add_score(self, cell, resources):
        super()._add_score(cell, resources)
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        partial = resources.get(PARTIAL, {}).get(grade_id)
        if grade_id in resources.get(NOT_GRADED, {}):
            grade = self.gradebook.find_grade(grade_id, self.notebook_id, self.assignment_id, self.student_id)
            grade.auto_score, grade.needs_manual_grade = None, True
            self.gradebook.db.commit()
        elif partial and [o.get("evalue") for o in cell.outputs if _fails(o)] == [partial[1]]:
            grade = self.gradebook.find_grade(grade_id, self.notebook_id, self.assignment_id, self.student_id)
            grade.auto_score = partial[0]  # the judge's verdict is the cell's only error: its cases' points
            self.gradebook.db.commit()


def _fails(output):
    """An output that scores a test cell 0 in nbgrader: an error, or anything on stderr."""
    return output.output_type == "error" or (output.output_type == "stream" and output.get("name") == "stderr")


class JudgedExecute(JudgeMixin, Execute):
    """nbgrader's Execute with the judge (what ``nbgrader autograde`` in ``notebooks/`` uses)."""
