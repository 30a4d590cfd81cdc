"""The graded exercises grade right, proved with real nbgrader.

Fast tests check the sources, the wrong-answer corpus and the student edition. The slow ones
(marked ``slow``, still part of ``make test``) release the course into a temporary copy and run
one ``nbgrader autograde`` per assignment over many submissions at once (a kernel start costs
seconds, so students are batched; the assignments are graded in parallel):

- ``solutions``: the source notebook, solutions in: full marks, nothing on stderr;
- ``untouched``: the released notebook as a student gets it: 0 on every graded cell;
- ``deleted-a-test-cell``: solutions, one tests cell deleted: nbgrader puts it back, full marks;
- ``wrong-<k>``: the source notebook with the k-th wrong answer of every exercise in place of its
  solution (``notebooks/wrong_answers/<assignment>/<exercise>__<name>.py``, packed as
  ``tests/synthetic_classes.py`` packs them): loses those exercises' points and only those.
  The soak test grades each wrong answer alone (``wrong-<exercise>-<name>``), which also proves that
  no wrong answer is caught only through another exercise's (``make test PYTEST_ARGS="-m soak"``).

Autograde times are written to ``_build/exercises/autograde_times.json``.
"""
import concurrent.futures
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
import warnings
from datetime import datetime
from pathlib import Path

import nbformat
import pytest

from autograder import build
from autograder.grading import judge

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
ASSIGNMENTS = build.assignments()
TIME_BUDGET_S = 10  # test time per graded notebook (issue 5)


def source_notebook(assignment):
    return nbformat.read(NOTEBOOKS / "source" / assignment / f"{assignment}.ipynb", as_version=4)


def exercises(assignment):
    """``{solution cell id: points}``, in notebook order."""
    nb = source_notebook(assignment)
    points = {c.id[:-len("-tests")]: c.metadata.nbgrader["points"] for c in nb.cells
              if c.metadata.get("nbgrader", {}).get("grade")}
    return {c.id: points[c.id] for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")}


def wrong_answers(assignment):
    return sorted((NOTEBOOKS / "wrong_answers" / assignment).glob("*__*.py"))


def checks_module(assignment):
    """The module of an assignment's hidden checks, run by the judge (``autograder.grading.exercises``)."""
    return __import__(f"autograder.grading.exercises.a{assignment}", fromlist=["_"])


def gpu_only(assignment):
    """The exercises whose points need a real GPU (``GPU_ONLY`` in the assignment's checks, e.g. 09_gpu)."""
    return tuple(getattr(checks_module(assignment), "GPU_ONLY", ()))


@functools.lru_cache(maxsize=None)
def real_gpu():
    """Whether the grading kernel sees a real CUDA device: the setup cell of 09_gpu, in nbgrader's environment."""
    code = ("import os; os.environ.setdefault('CHIBIGRAD_SIMULATE_CUDA', 'auto'); import chibigrad as t; "
            "print(t.cuda.is_available() and not t.cuda.is_simulated())")
    result = subprocess.run([sys.executable, "-c", code], env=build.nbgrader_env(), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip() == "True"


def full_marks(assignment, exercise, points):
    """What a right answer scores here: its points, but None (not graded: blank, neither 0 nor free points) for a
    GPU-only exercise on a machine without a GPU; the test below checks the cell says so."""
    return None if exercise in gpu_only(assignment) and not real_gpu() else points


def check_full_marks(assignment, nb, scores):
    """Every exercise scores full_marks; a GPU-only one without a GPU is not graded and says why."""
    assert set(scores) == set(exercises(assignment))
    assert all(score == full_marks(assignment, name, top) for name, (score, top) in scores.items()), scores
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if cell.id[:-len("-tests")] in gpu_only(assignment) and not real_gpu():
                assert output.output_type != "error", output.evalue
                if output.output_type == "display_data":
                    assert output.data["text/plain"].startswith("NOT GRADED HERE: needs a real CUDA device")
                continue
            assert output.output_type != "error", f"{cell.id}: {output.get('evalue')}"
            assert not (output.output_type == "stream" and output.name == "stderr"), f"{cell.id}: {output.text}"


def solution_regions(source):
    return re.findall(r"### BEGIN SOLUTION\n(.*?)\n[ \t]*### END SOLUTION", source, flags=re.S)


# ---- the sources ---------------------------------------------------------------------------------------------------

def test_there_are_assignments():
    assert ASSIGNMENTS[0] == "01_graphs" and "02_backward" in ASSIGNMENTS


def test_generated_notebooks_are_up_to_date_with_the_text_sources():
    stale = build.build_sources(check=True)
    assert not stale, f"run `.venv/bin/python notebooks/build_sources.py`: out of date: {stale}"


def test_every_source_notebook_is_a_generated_one():
    generated = {p.parent.name for p in (NOTEBOOKS / "source").glob("*/*.ipynb")}
    assert generated == set(ASSIGNMENTS)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_assignment_structure(assignment):
    nb = source_notebook(assignment)
    graded = exercises(assignment)
    assert 3 <= len(graded) <= 5, f"{assignment}: {len(graded)} exercises, the course has 3-5 per assignment"
    assert all(p > 0 for p in graded.values())
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].metadata.nbgrader["locked"], "starts with a recap"
    module = checks_module(assignment)
    for exercise in graded:
        tests = next(c for c in nb.cells if c.id == f"{exercise}-tests")
        visible, hidden = tests.source.split("### BEGIN HIDDEN TESTS")
        assert visible.count("assert ") >= 2, f"{exercise}: give the student visible tests"
        # the judge runs the check in its own process: no code in the notebook
        assert judge.check_for(assignment, exercise), f"{module.__name__} registers no check for {exercise}"
        assert not hidden.split("### END HIDDEN TESTS")[0].replace("#", "").strip().count("\n"), \
            f"{exercise}: a judged exercise's hidden region holds one comment, no code"
        assert "import" not in hidden and "(" not in hidden, f"{exercise}: no code in a judged hidden region"
    setup = next(c for c in nb.cells if c.id == "setup").source
    assert "chibigrad.tracebacks.install()" in setup, f"{assignment}: errors should read as PyTorch's (issue 17)"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_notebook_metadata_is_what_nbgrader_expects(assignment):
    from nbgrader.nbgraderformat import MetadataValidator
    nb = source_notebook(assignment)
    MetadataValidator().validate_nb(nb)
    ids = [c.metadata.nbgrader["grade_id"] for c in nb.cells if "nbgrader" in c.metadata]
    assert len(ids) == len(set(ids))
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader")
        if meta:
            assert meta["schema_version"] == 3 and meta["grade_id"] == cell.id
            assert meta["locked"] != meta["solution"]


def test_text_source_errors_are_reported(tmp_path):
    text = tmp_path / "99_bad.py"
    text.write_text('# %% nbgrader="solution" id="answer"\nx = 1\n')
    with pytest.raises(ValueError, match="needs a tests cell"):
        build.notebook_from_text(text)
    text.write_text('# %% nbgrader="tests" id="answer-tests"\nassert True\n')
    with pytest.raises(ValueError, match="points=N"):
        build.notebook_from_text(text)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_wrong_answer_corpus_has_two_per_exercise(assignment):
    graded = exercises(assignment)
    files = wrong_answers(assignment)
    names = [p.stem.split("__")[0] for p in files]
    assert set(names) <= set(graded), f"unknown exercises: {set(names) - set(graded)}"
    for exercise in graded:
        assert names.count(exercise) >= 2, f"{assignment}.{exercise}: at least two wrong answers"
    for path in files:
        compile(path.read_text(), str(path), "exec")
        assert path.read_text().startswith("# "), f"{path.name}: first line says what the mistake is"


def _judge_student(**functions):
    """The judge's view of a notebook that defines ``functions``, answered by the runner in this process."""
    from autograder.grading import judge, protocol, runner

    def transport(request, timeout):
        return runner.answer(protocol.Call.from_json(request), dict(functions)), None
    return judge.Student(transport)


def _failures(check, student):
    """Every failure message of a judged check: its named cases' (partial credit) and the one it raised."""
    try:
        check(student)
    except AssertionError as err:
        return [failure for _, _, failure in student.cases if failure] + [str(err)]
    return [failure for _, _, failure in student.cases if failure]


def test_checks_refuse_the_engine_doing_the_exercise():
    """Exercises that re-implement what chibigrad ships block the shipped code while the answer runs: every named
    case fails saying so."""
    from autograder.grading.exercises import a01_graphs, a02_backward
    from chibigrad.autograd import engine
    for check, answer, refusal in [
            (a01_graphs.walk, {"walk": lambda t: engine.topological_order([t.grad_fn]) if t.grad_fn else []},
             "walking the graph yourself"),
            (a02_backward.dfs_order, {"dfs_order": engine.topological_order}, "write the depth-first ordering yourself"),
            (a02_backward.sum_to, {"sum_to": lambda grad, shape: grad.sum_to_size(shape)},
             "do not call Tensor.sum_to_size")]:
        student = _judge_student(**answer)
        failures = _failures(check, student)
        assert failures and all(refusal in f or "not graded until" in f for f in failures), failures
        assert any(refusal in f for f in failures)
    assert engine.topological_order.__code__.co_name == "topological_order", "restored afterwards"


def test_03_checks_refuse_the_hessian_helpers_and_measure_what_the_node_saved(monkeypatch):
    """03's hvp fails an answer that calls chibigrad's own Hessian-vector product; its LeakyReLU check reads the
    bytes a node saved from the node too, so a Function that saves x and makes ``memory.saved()`` lie still fails."""
    import chibigrad
    from autograder.grading.exercises import a03_graph_lifetime
    from chibigrad.autograd import Function, functional
    with pytest.raises(AssertionError, match="write hvp with torch.autograd.grad yourself"):
        a03_graph_lifetime.hvp(_judge_student(hvp=lambda f, params, vectors: functional.hvp(f, tuple(params),
                                                                                             tuple(vectors))[1]))
    assert functional.hvp.__code__.co_name == "hvp", "restored afterwards"

    namespace = {"torch": chibigrad, "Function": Function}  # the corpus's LeakyReLU that saves x, not the mask
    exec((NOTEBOOKS / "wrong_answers" / "03_graph_lifetime" / "leaky_relu__saves_input.py").read_text(), namespace)
    LeakyReLU = namespace["LeakyReLU"]

    real = chibigrad.memory.saved
    monkeypatch.setattr(chibigrad.memory, "saved", lambda: real() - 7)  # one byte an element on the first case
    with pytest.raises(AssertionError, match="8 bytes are saved for backward"):
        a03_graph_lifetime.leaky_relu(_judge_student(LeakyReLU=LeakyReLU))


def test_checks_refuse_chibigrads_own_functions_in_06():
    """06 asks for another formulation of what chibigrad ships (logsumexp, gradcheck): an answer that calls the
    shipped one fails, and the shipped one works again afterwards."""
    from autograder.grading.exercises import a06_custom_functions
    from chibigrad.autograd import Function, gradcheck
    from chibigrad.ops import reduction

    class LogSumExp(Function):
        @staticmethod
        def forward(ctx, x, b, dim):
            return x.logsumexp(dim)

    with pytest.raises(AssertionError, match="write the stable log-sum-exp yourself"):
        a06_custom_functions.logsumexp(_judge_student(LogSumExp=LogSumExp))
    with pytest.raises(AssertionError, match="write the gradient check yourself"):
        a06_custom_functions.check_grad(_judge_student(check_grad=lambda fn, inputs, eps=1e-6: [gradcheck(fn, inputs)
                                                                                                and 0.0]))
    assert reduction.LogSumExp.forward.__code__.co_name == "forward", "restored afterwards"


def test_a_function_whose_backward_never_runs_fails_in_06():
    """A Swish whose apply computes with chibigrad's own operations gets right values and gradients without a
    backward of its own: it fails even with its grad_fn renamed, since the node was not made by Swish.apply."""
    import chibigrad as torch
    from autograder.grading.exercises import a06_custom_functions
    from chibigrad.autograd import Function

    def renamed(out):
        out.grad_fn.name = lambda: "SwishBackward"
        return out

    class Swish(Function):
        apply = staticmethod(lambda x, beta: renamed(x * torch.sigmoid(beta * x)))

    student = _judge_student(Swish=Swish)
    failures = _failures(a06_custom_functions.swish, student)
    assert any("grad_fn was not made by Swish.apply, so backward never runs" in f for f in failures), failures
    assert student.cases[0][2] and student.cases[1][2], "neither first nor second derivatives earn points"


def test_checks_refuse_chibigrads_own_functions_in_07():
    """07 asks for another formulation of what chibigrad ships (checkpoint_sequential, checkpoint): an answer
    that calls the shipped one fails."""
    from autograder.grading.exercises import a07_checkpointing
    from chibigrad.autograd import Function
    from chibigrad.utils.checkpoint import checkpoint, checkpoint_sequential

    with pytest.raises(AssertionError, match="do not call chibigrad's checkpoint_sequential"):
        a07_checkpointing.checkpoint_segments(_judge_student(
            checkpoint_segments=lambda layers, boundaries, x: checkpoint_sequential(layers, len(boundaries) + 1, x,
                                                                                    use_reentrant=False)))

    class ShippedCheckpoint(Function):
        @staticmethod
        def forward(ctx, module, x, *params):
            return checkpoint(module, x, use_reentrant=False)

    with pytest.raises(AssertionError, match="write the checkpoint Function yourself"):
        a07_checkpointing.checkpoint_fn(_judge_student(CheckpointFn=ShippedCheckpoint))
    assert checkpoint.__code__.co_name == "checkpoint", "restored afterwards"


def test_07_budgets_are_judged_on_the_whole_training_step():
    """choose_segments is judged on the saved-bytes peak of forward and backward: on every hidden model some
    budget gets another answer from the forward peak alone (backward recomputes a wide early segment)."""
    from autograder.grading import cases
    from autograder.grading.exercises import a07_checkpointing as a07
    for name in a07.CHOOSE_CASES:
        _, model, x = cases.case_07(name)
        full, forward = a07.step_peaks(model, x)
        assert any(a07.fewest(full, b) != a07.fewest(forward, b) for b in a07.budgets(full)), name


def test_checks_refuse_chibigrads_clip_grad_norm_in_05():
    """05's per-group clipping is another formulation of clip_grad_norm_ (which the book uses): calling it fails."""
    from autograder.grading.exercises import a05_accumulation
    from chibigrad.nn.utils import clip_grad_norm_

    def per_group(optimizer, max_norm, norm_type=2.0, error_if_nonfinite=False):
        return [float(clip_grad_norm_([p for p in g["params"] if p.grad is not None], g.get("max_norm", max_norm),
                                      norm_type, error_if_nonfinite)) for g in optimizer.param_groups]

    with pytest.raises(AssertionError, match="do not call chibigrad's clip_grad_norm_"):
        a05_accumulation.clip_grad_norm_groups(_judge_student(clip_grad_norm_groups_=per_group))
    assert clip_grad_norm_.__code__.co_name == "clip_grad_norm_", "restored afterwards"


def test_micro_batches_are_judged_by_what_grad_holds_at_each_forward():
    """05's accumulate must backpropagate each micro-batch before the next one's forward. The judge checks it on
    values (at micro-batch k's forward, .grad holds micro-batches 1..k-1's gradients), which only doing so
    produces, not only on the saved-tensor peak that the student's process measures (and could fake)."""
    from autograder.grading.exercises import a05_accumulation

    def one_backward(model, loss_fn, inputs, targets, micro_batch):  # right gradients, every graph alive at once
        n = len(inputs)
        total = sum(loss_fn(model(inputs[s:s + micro_batch]), targets[s:s + micro_batch]) *
                    (len(inputs[s:s + micro_batch]) / n) for s in range(0, n, micro_batch))
        total.backward()
        return total.item()

    with pytest.raises(AssertionError, match="when micro-batch 2's forward began, .grad did not hold"):
        a05_accumulation.accumulate(_judge_student(accumulate=one_backward))


def _in_process_student(source):
    """A judge.Student whose calls the runner answers in this process, in a namespace where ``source`` ran."""
    import numpy as np

    import chibigrad
    from autograder.grading import protocol, runner
    namespace = {"torch": chibigrad, "time": time, "np": np}
    exec(source, namespace)
    return judge.Student(lambda request, timeout: (runner.answer(protocol.Call.from_json(request), namespace),
                                                   None))


def test_gpu_only_checks_catch_their_wrong_answers_on_a_fake_asynchronous_device(monkeypatch):
    """Without a GPU a GPU-only exercise is not graded whatever the answer, so grading here cannot show its wrong
    answers caught. The judge's check runs here on a fake asynchronous device instead: `work()` queues 30 ms of
    device time and returns at once, `torch.cuda.synchronize()` waits until the queue is done, as a GPU's does.
    The solution passes every check; each wrong answer fails one."""
    import chibigrad
    from autograder.grading import cases
    from autograder.grading.exercises import a09_gpu
    assert a09_gpu.GPU_ONLY == ("time_per_call",)
    busy = [0.0]  # when the fake device's queue is done

    def work():
        busy[0] = max(busy[0], time.perf_counter()) + 0.03

    def synchronize(device=None):
        time.sleep(max(0.0, busy[0] - time.perf_counter()))

    def reference(n, k):
        synchronize()
        start = time.perf_counter()
        work()
        synchronize()
        return time.perf_counter() - start

    def busy_observer(fn, recipe, call, torch):  # the student side of "gpu_busy", on the fake device
        got = call(fn, work, "cuda", 2, recipe["repeats"])
        return {"value": got if isinstance(got, float) else None, "type": type(got).__name__}

    monkeypatch.setattr(chibigrad.cuda, "synchronize", synchronize)
    monkeypatch.setattr(a09_gpu, "real_gpu", lambda: True)
    monkeypatch.setattr(a09_gpu, "gpu_seconds", reference)
    monkeypatch.setattr(cases, "_gpu_busy", busy_observer)
    solution = next(c for c in source_notebook("09_gpu").cells if c.id == "time_per_call")
    a09_gpu.time_per_call(_in_process_student(solution.source))
    answers = [p for p in wrong_answers("09_gpu") if p.stem.split("__")[0] == "time_per_call"]
    assert len(answers) >= 2
    for path in answers:
        with pytest.raises(AssertionError):
            a09_gpu.time_per_call(_in_process_student(path.read_text()))
            print(f"not caught: {path.name}")


def test_gpu_only_check_is_not_graded_without_a_real_gpu_in_the_judges_process():
    """The judge asks its own chibigrad whether there is a real GPU; without one a right answer is not graded
    (never 0, never points) and the student process is not even asked."""
    from autograder.grading.exercises import a09_gpu
    if a09_gpu.real_gpu():
        pytest.skip("this machine has a real GPU")
    solution = next(c for c in source_notebook("09_gpu").cells if c.id == "time_per_call")
    student = _in_process_student(solution.source)
    with pytest.raises(judge.NotGraded, match="needs a real CUDA device"):
        a09_gpu.time_per_call(student)
    assert student.calls == 0


# ---- what Validate tells a student: the visible tests against the wrong answers -------------------------------------

VISIBLE_CATCH_MIN = 90.0  # percent of each assignment's wrong answers that its visible tests must catch


def _visible_catch_module():
    sys.path.insert(0, str(NOTEBOOKS))
    try:
        import visible_catch
    finally:
        sys.path.remove(str(NOTEBOOKS))
    return visible_catch


class _VisibleCatchReport:
    """Prints the figure per assignment at the end of the run (pytest -q hides what passing tests print)."""

    def __init__(self, lines):
        self.lines = lines

    def pytest_terminal_summary(self, terminalreporter):
        terminalreporter.section("visible tests: wrong answers caught (Validate fails on them)")
        for line in self.lines:
            terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def visible_catch(tmp_path_factory, request):
    """``{assignment: summary}``: every wrong answer run against the visible tests and the student chibigrad
    (``notebooks/visible_catch.py``: one process per assignment, a fork per answer; about 20 s in all)."""
    vc = _visible_catch_module()
    student = vc.student_package(tmp_path_factory.mktemp("student-package"))
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        runs = {a: pool.submit(vc.run_assignment, a, student) for a in ASSIGNMENTS}
        results = {a: f.result() for a, f in runs.items()}
    summaries = {a: vc.summary(r) for a, r in results.items()}
    lines = [f"{a:22} {s['caught']:3}/{s['wrong']:<3} {s['percent']:5.1f}%" + (f"  missed: {', '.join(s['missed'])}"
                                                                            if s["missed"] else "")
             for a, s in summaries.items()]
    total = sum(s["caught"] for s in summaries.values()), sum(s["wrong"] for s in summaries.values())
    lines.append(f"{'all':22} {total[0]:3}/{total[1]:<3} {100.0 * total[0] / total[1]:5.1f}%  "
                 f"(at least {VISIBLE_CATCH_MIN:.0f}% per assignment)")
    request.config.pluginmanager.register(_VisibleCatchReport(lines), "visible-catch-report")
    out = ROOT / "_build" / "exercises"
    out.mkdir(parents=True, exist_ok=True)
    (out / "visible_catch.json").write_text(json.dumps(
        {a: {k: v for k, v in s.items() if k != "solutions"} for a, s in summaries.items()}, indent=1) + "\n")
    return {a: (summaries[a], results[a]) for a in ASSIGNMENTS}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_visible_tests_catch_at_least_90_percent_of_the_wrong_answers(visible_catch, assignment):
    summary, _ = visible_catch[assignment]
    assert summary["solutions"]["failed"] is None, f"the solutions fail the visible tests: {summary['solutions']}"
    assert not summary["broken"], f"a cell other than the answer failed: {summary['broken']}"
    assert summary["percent"] >= VISIBLE_CATCH_MIN, \
        f"{assignment}: visible tests catch {summary['caught']}/{summary['wrong']}; missed {summary['missed']}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_visible_failure_is_a_sentence(visible_catch, assignment):
    """What a wrong answer shows the student is an AssertionError whose text says what was expected, not an engine
    error (RuntimeError, AttributeError, ...) from inside the test cell."""
    summary, _ = visible_catch[assignment]
    assert not summary["not_sentences"], "\n".join(summary["not_sentences"])


def test_recursive_wrong_answers_fail_a_visible_deep_graph_test(visible_catch):
    """Every exercise that forbids recursion has a recursive wrong answer, and Validate says why it fails."""
    recursive = {(a, r["exercise"]): r for a in ASSIGNMENTS for r in visible_catch[a][1]
                 if r["name"].endswith("__recursive")}
    forbidding = {("01_graphs", e) for e in ("walk", "summarize", "find_leaves", "depth")} | \
        {("02_backward", e) for e in ("dfs_order", "path_sum_grad")}
    assert forbidding <= set(recursive), f"no recursive wrong answer for {sorted(forbidding - set(recursive))}"
    for (a, exercise), r in recursive.items():
        assert r["failed"] and "RecursionError" in r["message"] and "explicit stack" in r["message"], (a, exercise, r)


def test_visible_catch_counts_an_uncaught_answer_as_missed(tmp_path):
    """The figure can fall: an answer that is the solution itself passes every visible test and is counted missed."""
    vc = _visible_catch_module()
    course_dir = tmp_path / "course"
    shutil.copytree(NOTEBOOKS / "source" / "01_graphs", course_dir / "source" / "01_graphs")
    (course_dir / "wrong_answers" / "01_graphs").mkdir(parents=True)
    walk = next(c for c in source_notebook("01_graphs").cells if c.id == "walk")
    (course_dir / "wrong_answers" / "01_graphs" / "walk__right.py").write_text("# not wrong at all\n" + walk.source)
    (course_dir / "wrong_answers" / "01_graphs" / "walk__none.py").write_text("# returns nothing\ndef walk(t):\n"
                                                                             "    return None\n")
    student = vc.student_package(tmp_path / "student", course_dir=NOTEBOOKS)
    summary = vc.summary(vc.run_assignment("01_graphs", student, course_dir=course_dir))
    assert (summary["caught"], summary["wrong"], summary["missed"]) == (1, 2, ["walk__right"])
    assert summary["percent"] == 50.0 and not summary["not_sentences"]


# ---- the student edition ---------------------------------------------------------------------------------------

def test_stub_exercises_replaces_marked_regions_only():
    source = textwrap.dedent("""\
        def kept():
            return 1


        def answer(x):
            \"\"\"Docstring stays.\"\"\"
            # BEGIN EXERCISE 09.answer
            secret = x * 42
            return secret
            # END EXERCISE
        """)
    assert [r[:3] for r in build.exercise_regions(source)] == [("09.answer", 7, 10)]
    stubbed = build.stub_exercises(source, lambda e: "09_x/09_x.ipynb")
    assert "secret" not in stubbed and "def kept" in stubbed and "Docstring stays" in stubbed
    namespace = {}
    exec(stubbed, namespace)
    with pytest.raises(NotImplementedError, match=r"Exercise 09\.answer: you write this in the notebook 09_x"):
        namespace["answer"](1)
    with pytest.raises(ValueError, match="never closed"):
        build.exercise_regions("# BEGIN EXERCISE 01.x\n")
    # a region that swallows the next function (a registration written inside it) would stub that function too
    spilled = "def f(a):\n    # BEGIN EXERCISE 02.f\n    return a\n\n\ndef g(a):\n    return a\n    # END EXERCISE\n"
    with pytest.raises(ValueError, match="line 6: the region BEGIN EXERCISE 02.f .* runs out of its function body"):
        build.exercise_regions(spilled)


def test_marked_regions_in_chibigrad_name_an_assignment():
    numbers = {build.number(a) for a in ASSIGNMENTS}
    found = {}
    for path in (ROOT / "chibigrad").rglob("*.py"):
        for exercise, *_ in build.exercise_regions(path.read_text()):
            found[exercise] = path
    assert "02.hypot" in found
    assert all(e.split(".")[0] in numbers for e in found), found


def _edition(folder, files):
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


def _install(staged, dest):
    (staged / build.MANIFEST).write_text(json.dumps(build._hashes(staged)))
    return list(build.install_edition(staged, dest))


def test_installing_a_release_never_loses_a_students_file(tmp_path):
    """New files are added, files the student did not change are updated, a changed file stays byte for byte
    with the changed release beside it (and the command says so), nothing is deleted, and it is idempotent."""
    dest = tmp_path / "student"
    first = _edition(tmp_path / "r1", {"01/01.ipynb": "released 1", "chibigrad/a.py": "a = 1\n",
                                        "chibigrad/b.py": "b = 1\n", "README.md": "readme 1"})
    lines = _install(first, dest)
    assert sorted(lines) == ["added 01/01.ipynb", "added README.md", "added chibigrad/a.py", "added chibigrad/b.py"]
    (dest / "01" / "01.ipynb").write_bytes(b"my work \xe2\x9c\x93")
    (dest / "chibigrad" / "b.py").write_text("b = 2  # my fix\n")
    (dest / "notes.txt").write_text("mine")
    second = _edition(tmp_path / "r2", {"01/01.ipynb": "released 2", "02/02.ipynb": "new", "chibigrad/a.py": "a = 2\n",
                                         "chibigrad/b.py": "b = 1\n", "README.md": "readme 2"})
    lines = _install(second, dest)
    beside = build.beside_name(dest / "01" / "01.ipynb", build._sha256(second / "01" / "01.ipynb"))
    assert (dest / "01" / "01.ipynb").read_bytes() == b"my work \xe2\x9c\x93", "the student's notebook is kept"
    assert beside.read_text() == "released 2" and beside.name.startswith("01.release-")
    assert f"kept your 01/01.ipynb (you changed it); the new release is beside it: 01/{beside.name}" in lines
    assert (dest / "chibigrad" / "b.py").read_text() == "b = 2  # my fix\n"
    assert not list((dest / "chibigrad").glob("b.release-*")), "b.py's release did not change: nothing beside it"
    assert (dest / "chibigrad" / "a.py").read_text() == "a = 2\n" and "updated chibigrad/a.py" in lines
    assert (dest / "02" / "02.ipynb").read_text() == "new" and "added 02/02.ipynb" in lines
    assert (dest / "notes.txt").read_text() == "mine"
    assert _install(second, dest) == [f"kept your 01/01.ipynb (you changed it); the new release is beside it: "
                                      f"01/{beside.name}", lines[-1]], "a second install changes nothing"
    note = beside.with_suffix(".md").read_text()  # where the student opens the notebook, not only in the terminal
    assert "Your `01.ipynb` is kept as you left it" in note and f"`{beside.name}`" in note
    assert len(list((dest / "01").iterdir())) == 3


def test_installing_over_an_edition_without_a_record_keeps_every_differing_file(tmp_path):
    """An edition released before the record existed: every file that differs counts as the student's."""
    dest = _edition(tmp_path / "student", {"01/01.ipynb": "my work", "chibigrad/a.py": "a = 1\n"})
    lines = _install(_edition(tmp_path / "r", {"01/01.ipynb": "released", "chibigrad/a.py": "a = 1\n"}), dest)
    assert (dest / "01" / "01.ipynb").read_text() == "my work"
    assert len(lines) == 2 and lines[0].startswith("kept your 01/01.ipynb")


def _make(*args, **env):
    return subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), *map(str, args)], capture_output=True,
                          text=True, timeout=900, env=dict(os.environ, **env))


@pytest.mark.slow
def test_release_and_what_make_lab_runs_keep_the_students_edit(released, tmp_path):
    """A release (the session's, copied), a student's edit, then what `make lab` runs before Lab opens (the release
    again when an input changed, nothing when none did): the edit is there byte for byte, a deleted notebook comes
    back."""
    student, stamp = tmp_path / "student", tmp_path / "released"
    shutil.copytree(released["student"], student)
    stamp.touch()
    variables = [f"STUDENT={student}", f"RELEASED={stamp}"]
    path = student / "01_graphs" / "01_graphs.ipynb"
    nb = nbformat.read(path, as_version=4)
    walk = next(c for c in nb.cells if c.id == "walk")
    walk.source = walk.source.replace('raise NotImplementedError("Exercise 01.walk: replace this line with your code")',
                                      "return []  # my first try, é")
    nbformat.write(nb, path)
    edited = path.read_bytes()
    (student / "02_backward" / "02_backward.ipynb").unlink()
    assert _make("-q", stamp, *variables).returncode == 0, "nothing changed: Lab opens without a release"
    stamp.touch()
    os.utime(stamp, (0, 0))  # as if an input changed since
    result = _make("-n", "lab", *variables)
    assert "autograder.build release" in result.stdout, result.stdout + result.stderr
    result = _make(stamp, *variables)  # what `make lab` runs before starting Lab
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_bytes() == edited
    assert "added 02_backward/02_backward.ipynb" in result.stdout, result.stdout
    assert (student / "02_backward" / "02_backward.ipynb").is_file()
    assert not list(path.parent.glob("*.release-*")), "the release of 01_graphs did not change: nothing beside it"
    assert "student edition up to date" in result.stdout


def _normalized(code):
    """Lines without comments and whitespace, blank lines dropped: what copying code keeps."""
    lines = []
    for line in code.splitlines():
        line = re.sub(r"\s+", "", re.sub(r"#.*$", "", line))
        if line:
            lines.append(line)
    return lines


def _answers():
    """``(name, normalized lines)`` of every graded answer: notebook solutions and chibigrad's marked regions."""
    for assignment in ASSIGNMENTS:
        for cell in source_notebook(assignment).cells:
            for region in solution_regions(cell.source):
                yield f"{assignment}:{cell.id}", _normalized(region)
    for path in (ROOT / "chibigrad").rglob("*.py"):
        for exercise, first, _, text in build.exercise_regions(path.read_text()):
            yield f"{path.relative_to(ROOT)}:{first} ({exercise})", _normalized(text)


def _windows(lines, n):
    return {tuple(lines[i:i + n]) for i in range(len(lines) - n + 1)}


def _leaks(lines, corpus_lines):
    """Pieces of an answer found in the corpus: a long line (>= 40 characters), or three lines in a row
    (the whole answer if it is shorter). Two lines in a row is too little: `ctx.save_for_backward(a, b, out)`
    then `return out` is how many of chibigrad's own ops end their forward."""
    n = min(3, len(lines))
    present, windows = set(corpus_lines), _windows(corpus_lines, n)
    found = [line for line in lines if len(line) >= 40 and line in present]
    found += [" / ".join(w) for w in _windows(lines, n) if w in windows]
    return found


def _edition_lines(directory):
    lines = []
    for path in sorted(Path(directory).rglob("*")):
        if path.suffix == ".py":
            lines += _normalized(path.read_text())
        elif path.suffix == ".ipynb":
            for cell in nbformat.read(path, as_version=4).cells:
                lines += _normalized(cell.source) if cell.cell_type == "code" else []
    return lines


def test_leak_check_finds_answers_in_the_instructor_files():
    """The check below is not vacuous: it flags every answer in the files that hold it."""
    corpus = _edition_lines(NOTEBOOKS / "source") + _edition_lines(ROOT / "chibigrad")
    for name, lines in _answers():
        assert _leaks(lines, corpus), f"{name}: the leak check cannot see this answer"


def _book_code_lines():
    """The code of every executed cell in the book's chapters."""
    import jupytext
    lines = []
    for path in sorted((ROOT / "book").glob("*.md")):
        for cell in jupytext.read(path).cells:
            lines += _normalized(cell.source) if cell.cell_type == "code" else []
    return lines


def test_no_graded_answer_or_hidden_check_in_the_book():
    corpus = _book_code_lines()
    assert len(corpus) > 500  # the chapters were really read
    leaks = {name: found for name, lines in _answers() if (found := _leaks(lines, corpus))}
    # A hidden check may share imports and the seeds' public examples (three lines of the
    # five-neuron network) with the book; five lines in a row would be its own logic.
    book_windows = _windows(corpus, 5)
    hidden = (ROOT / "autograder" / "grading" / "exercises").glob("a*.py")
    for path in sorted(hidden):
        code = [line for line in _normalized(path.read_text()) if not line.startswith(("import", "from"))]
        if found := [" / ".join(w) for w in _windows(code, 5) if w in book_windows]:
            leaks[str(path.relative_to(ROOT))] = found
    assert not leaks, f"the book shows graded answers or hidden checks: {leaks}"


@pytest.mark.slow
def test_no_graded_answer_in_the_student_edition(released):
    corpus = _edition_lines(released["student"])
    leaks = {name: found for name, lines in _answers() if (found := _leaks(lines, corpus))}
    assert not leaks, f"answers found in the student edition: {leaks}"


@pytest.mark.slow
def test_student_edition_layout(released):
    student = released["student"]
    for assignment in ASSIGNMENTS:
        nb_path = student / assignment / f"{assignment}.ipynb"
        text = nb_path.read_text()
        for secret in ("BEGIN SOLUTION", "HIDDEN TESTS", "autograder"):
            assert secret not in text, f"{nb_path.name} mentions {secret!r}"
        for exercise in exercises(assignment):
            assert f'NotImplementedError(\\"Exercise {build.number(assignment)}.{exercise}:' in text
    for name in ("README.md", "requirements.txt", "pyproject.toml", "nbgrader_config.py"):
        assert (student / name).is_file(), name
    requirements = (student / "requirements.txt").read_text()
    assert "nbgrader==" in requirements and "numpy==" in requirements and "jupyterlab==" in requirements
    package_text = "".join(p.read_text() for p in (student / "chibigrad").rglob("*.py"))
    assert "BEGIN EXERCISE" not in package_text and "__pycache__" not in str(list((student / "chibigrad").rglob("*")))


def test_lab_has_nbgraders_validate_button():
    """`make lab` relies on the labextension (the button) and the server extension (what it calls)."""
    prefix = Path(sys.prefix)
    config = prefix / "etc" / "jupyter" / "jupyter_server_config.d" / "nbgrader.json"
    if not config.is_file():
        pytest.skip("not running in the project venv")
    extensions = json.loads(config.read_text())["ServerApp"]["jpserver_extensions"]
    assert extensions.get("nbgrader.server_extensions.validate_assignment") is True
    package = json.loads((prefix / "share/jupyter/labextensions/@jupyter/nbgrader/package.json").read_text())
    assert package["version"] == __import__("nbgrader").__version__
    disabled = prefix / "etc" / "jupyter" / "labconfig" / "page_config.json"
    assert not disabled.is_file() or "@jupyter/nbgrader" not in disabled.read_text()


def test_student_lab_config_turns_off_only_instructor_plugins_that_exist(tmp_path):
    """The student edition's .jupyter/ disables nbgrader's instructor plugins and server extensions by their real
    names (a typo would silently leave them on) and keeps Validate."""
    build.write_lab_config(tmp_path)
    disabled = json.loads((tmp_path / "labconfig" / "page_config.json").read_text())["disabledExtensions"]
    server = json.loads((tmp_path / "jupyter_server_config.json").read_text())["ServerApp"]["jpserver_extensions"]
    assert "@jupyter/nbgrader:validate-assignment" not in disabled
    assert server == {"nbgrader.server_extensions.validate_assignment": True,
                      "nbgrader.server_extensions.formgrader": False,
                      "nbgrader.server_extensions.assignment_list": False,
                      "nbgrader.server_extensions.course_list": False}
    prefix = Path(sys.prefix)
    bundle = prefix / "share/jupyter/labextensions/@jupyter/nbgrader/static"
    if not bundle.is_dir():
        pytest.skip("not running in the project venv")
    nbgrader_js = "".join(p.read_text(errors="replace") for p in bundle.glob("*.js"))
    for plugin in disabled:
        if plugin.startswith("@jupyter/nbgrader:"):
            assert f'"{plugin}"' in nbgrader_js, f"no nbgrader lab plugin {plugin}"
    lab_js = "".join(p.read_text(errors="replace") for p in
                     (prefix / "share/jupyter/lab/static").glob("*.js"))
    assert "@jupyterlab/apputils-extension:announcements" in lab_js
    assert "@jupyterlab/extensionmanager-extension" in lab_js
    assert (prefix / "share/jupyter/labextensions/jupyterlab-jupytext").is_dir()
    enabled = json.loads((prefix / "etc/jupyter/jupyter_server_config.d/nbgrader.json").read_text())
    assert set(server) == set(enabled["ServerApp"]["jpserver_extensions"])


def _run_with_student_edition(student, code):
    env = dict(os.environ, PYTHONPATH=str(student))
    return subprocess.run([sys.executable, "-c", code], cwd=student.parent, env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.slow
def test_student_package_works_without_the_answers(released):
    student = released["student"]
    code = textwrap.dedent("""
        import chibigrad as torch
        assert torch.__file__.startswith(%r), torch.__file__
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x.sin() * x + x ** 2).sum().backward()
        torch.nn.Linear(3, 2)(torch.randn(4, 3)).sum().backward()
        try:
            torch.hypot(x, x)
        except NotImplementedError as err:
            print(err)
    """ % str(student))
    result = _run_with_student_edition(student, code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Exercise 02.hypot: you write this in the notebook 02_backward/02_backward.ipynb."


def _filled(released_nb, source_nb):
    """The released notebook with the source's solution cells put back: a student who solved everything."""
    solutions = {c.id: c.source for c in source_nb.cells if c.metadata.get("nbgrader", {}).get("solution")}
    for cell in released_nb.cells:
        if cell.id in solutions:
            cell.source = solutions[cell.id]
    return released_nb


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_visible_tests_pass_with_the_student_edition_and_validate_says_so(released, assignment, tmp_path):
    """What a student sees: solutions + the student chibigrad pass the visible tests, and the Validate
    button (nbgrader validate, run in the student edition's directory with its config) says so."""
    student = released["student"]
    work = tmp_path / "student"
    shutil.copytree(student, work)
    path = work / assignment / f"{assignment}.ipynb"
    nb = _filled(nbformat.read(path, as_version=4), source_notebook(assignment))
    check = nbformat.v4.new_code_cell(
        f"import chibigrad\nassert chibigrad.__file__.startswith({str(work)!r}), chibigrad.__file__", id="which",
        metadata={"nbgrader": {"grade": True, "grade_id": "which", "locked": True, "points": 0,
                               "schema_version": 3, "solution": False, "task": False}})
    nb.cells.append(check)  # a graded cell, so validate fails if the kernel imported the full chibigrad
    nbformat.write(nb, path)
    env = dict(build.nbgrader_env(), PYTHONPATH=str(work))
    result = subprocess.run([sys.executable, "-m", "nbgrader", "validate", str(path)], cwd=work, env=env,
                            capture_output=True, text=True, timeout=300)
    assert "Success! Your notebook passes all the tests." in result.stdout, result.stdout + result.stderr
    untouched = student / assignment / f"{assignment}.ipynb"
    result = subprocess.run([sys.executable, "-m", "nbgrader", "validate", str(untouched)], cwd=work, env=env,
                            capture_output=True, text=True, timeout=300)
    assert f"VALIDATION FAILED ON {len(exercises(assignment))} CELL(S)" in result.stdout, result.stdout


# ---- self-study: one notebook graded with the hidden tests -----------------------------------------------------------

KNOWN_NAMES_ONLY = '''def summarize(t):
    """Counts only the node kinds of the visible examples: passes Validate, fails the hidden random graphs."""
    counts, seen, stack = {}, set(), [t.grad_fn] if t.grad_fn is not None else []
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if node.name() in ("AddBackward0", "MulBackward0", "SinBackward0", "AccumulateGrad"):
            counts[node.name()] = counts.get(node.name(), 0) + 1
        stack.extend(child for child, _ in node.next_functions if child is not None)
    return counts
'''


@pytest.mark.slow
def test_self_grade_grades_one_notebook_with_the_hidden_tests_and_leaves_it_alone(released, tmp_path):
    """`make grade NB=...`: a reader's finished 01_graphs, right except a summarize written to the visible examples,
    scores full marks except summarize, whose hidden test says why; the file is byte for byte what it was."""
    path = tmp_path / "my work" / "01_graphs.ipynb"
    path.parent.mkdir()
    nb = _filled(nbformat.read(released["student"] / "01_graphs" / "01_graphs.ipynb", as_version=4),
                 source_notebook("01_graphs"))
    next(c for c in nb.cells if c.id == "summarize").source = KNOWN_NAMES_ONLY
    nbformat.write(nb, path)
    before = path.read_bytes()
    result = _make("grade", f"NB={path}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_bytes() == before
    lines = result.stdout.splitlines()
    assert any(re.match(r"\s+summarize\s+0 / 2\s+AssertionError: hidden case 'small graphs .*' failed: summarize on \S+", line)
               for line in lines), result.stdout
    for exercise, points in exercises("01_graphs").items():
        if exercise != "summarize":
            assert any(re.match(rf"\s+{exercise}\s+{points} / {points}$", line) for line in lines), result.stdout
    assert re.search(r"total\s+10 / 12", result.stdout) and "only read, not changed" in result.stdout


# ---- grading with nbgrader autograde ---------------------------------------------------------------------------------

def _wrong_notebooks(assignment, alone):
    """``{student id: wrong answer files}``: the k-th wrong answer of every exercise in one notebook (a
    graded notebook costs seconds), or with ``alone`` one notebook per wrong answer."""
    paths = wrong_answers(assignment)
    if alone:
        return {f"wrong-{p.stem.replace('__', '-')}".replace("_", "-"): [p] for p in paths}
    by_exercise = {}
    for path in paths:
        by_exercise.setdefault(path.stem.split("__")[0], []).append(path)
    rounds = max(map(len, by_exercise.values()))
    return {f"wrong-{k}": [ps[k] for ps in by_exercise.values() if k < len(ps)] for k in range(rounds)}


def _submissions(assignment, course_dir, alone=False):
    """``{student id: (notebook, the exercises it answers wrong)}``."""
    source = source_notebook(assignment)
    released_nb = nbformat.read(course_dir / "release" / assignment / f"{assignment}.ipynb", as_version=4)
    deleted = nbformat.from_dict(json.loads(json.dumps(source)))
    first = next(iter(exercises(assignment)))
    deleted.cells = [c for c in deleted.cells if c.id != f"{first}-tests"]  # put back by add_missing_cells
    subs = {"solutions": (source, set()), "untouched": (released_nb, set()), "deleted-a-test-cell": (deleted, set())}
    for student, paths in _wrong_notebooks(assignment, alone).items():
        nb = nbformat.from_dict(json.loads(json.dumps(source)))  # deep copy
        for path in paths:
            cell = next(c for c in nb.cells if c.id == path.stem.split("__")[0])
            cell.source = path.read_text().rstrip("\n")
        subs[student] = (nb, {path.stem.split("__")[0] for path in paths})
    return subs


def _nbgrader_autograde(assignment, course_dir):
    return subprocess.run([sys.executable, "-m", "nbgrader", "autograde", assignment], cwd=course_dir,
                          env=build.nbgrader_env(), capture_output=True, text=True, timeout=1800)


def _traceback(result):
    """nbgrader's log from the first traceback on (or its tail): what failed and why."""
    log = result.stdout + result.stderr
    first = log.find("Traceback (most recent call last)")
    return log[max(first - 500, 0):][:6000] if first >= 0 else log[-6000:]


def _autograde(assignment, released, alone=False):
    """Autograde every submission of one assignment in a copy of the released course."""
    course_dir = released["course"].parent / f"grade-{assignment}{'-alone' if alone else ''}"
    shutil.copytree(released["course"], course_dir)
    subs = _submissions(assignment, course_dir, alone)
    for student, (nb, _) in subs.items():
        target = course_dir / "submitted" / student / assignment / f"{assignment}.ipynb"
        target.parent.mkdir(parents=True)
        nbformat.write(nb, target)
    start = time.perf_counter()
    result = _nbgrader_autograde(assignment, course_dir)
    wall = time.perf_counter() - start
    if result.returncode != 0:
        # nbgrader removes what it could not grade, so a second run grades only those submissions.
        # A kernel that fails to start on a loaded machine passes then; a real error fails again.
        warnings.warn(f"nbgrader autograde {assignment} failed once and was re-run:\n{_traceback(result)}")
        result = _nbgrader_autograde(assignment, course_dir)
    assert result.returncode == 0, _traceback(result)
    from nbgrader.api import Gradebook
    scores = {}
    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gb:
        for student in subs:
            nb = gb.find_submission_notebook(assignment, assignment, student)
            scores[student] = {g.name[:-len("-tests")]: (None if build._not_graded(g) else g.score, g.max_score)
                               for g in nb.grades}
    autograded = {s: nbformat.read(course_dir / "autograded" / s / assignment / f"{assignment}.ipynb", as_version=4)
                  for s in subs}
    return {"scores": scores, "wrong": {s: e for s, (_, e) in subs.items()}, "autograded": autograded,
            "wall_s": wall, "log": result.stderr}


def _grade_selected(released, request, alone):
    """The assignments autograded, two at a time: ``{assignment: results}``. Only those whose tests
    were selected (``-k 06_custom``), so one assignment can be iterated on alone."""
    selected = {item.callspec.params.get("assignment") for item in request.session.items
                if hasattr(item, "callspec")}
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {a: pool.submit(_autograde, a, released, alone) for a in ASSIGNMENTS if a in selected}
        return {a: f.result() for a, f in futures.items()}


@pytest.fixture(scope="session")
def graded(released, request):
    """The wrong answers packed, the k-th of every exercise in one notebook."""
    results = _grade_selected(released, request, alone=False)
    _write_times(results, released)
    return results


@pytest.fixture(scope="session")
def graded_alone(released, request):
    """Each wrong answer in a notebook of its own (the soak test; about three times the notebooks)."""
    return _grade_selected(released, request, alone=True)


def _cell_seconds(cell):
    meta = cell.metadata.get("execution", {})
    start, end = meta.get("iopub.execute_input"), meta.get("shell.execute_reply")
    if not (start and end):
        return 0.0
    parse = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))  # noqa: E731
    return (parse(end) - parse(start)).total_seconds()


def _test_seconds(nb):
    return sum(_cell_seconds(c) for c in nb.cells if c.cell_type == "code")


def _write_times(results, released):
    report = {"release_s": round(released["release_s"], 1)}
    for assignment, r in results.items():
        report[assignment] = {
            "notebooks": len(r["scores"]),
            "autograde_wall_s": round(r["wall_s"], 1),
            "wall_s_per_notebook": round(r["wall_s"] / len(r["scores"]), 1),
            "solutions_execution_s": round(_test_seconds(r["autograded"]["solutions"]), 2),
            "solutions_cells_s": {c.id: round(_cell_seconds(c), 2) for c in r["autograded"]["solutions"].cells
                                  if c.cell_type == "code"},
        }
    out = ROOT / "_build" / "exercises"
    out.mkdir(parents=True, exist_ok=True)
    (out / "autograde_times.json").write_text(json.dumps(report, indent=1) + "\n")


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solutions_score_full_marks_without_stderr(graded, assignment):
    r = graded[assignment]
    check_full_marks(assignment, r["autograded"]["solutions"], r["scores"]["solutions"])


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_deleted_test_cell_is_put_back_and_graded(graded, assignment):
    r = graded[assignment]
    check_full_marks(assignment, r["autograded"]["deleted-a-test-cell"], r["scores"]["deleted-a-test-cell"])


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_errors_show_no_frame_inside_chibigrad(graded, assignment):
    """chibigrad.tracebacks, installed by every setup cell: a student sees their frames and the message,
    as with PyTorch (whose internals are C++), in every error the wrong answers raised under grading."""
    package = str(ROOT / "chibigrad") + os.sep
    errors = [o for nb in graded[assignment]["autograded"].values() for c in nb.cells for o in c.get("outputs", [])
              if o.output_type == "error"]
    assert errors, "the wrong answers raise errors"
    inside = [line for o in errors for line in o.traceback if package in re.sub(r"\x1b\[[0-9;]*m", "", line)]
    assert not inside, inside[:3]


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_untouched_release_scores_zero_everywhere(graded, assignment):
    scores = graded[assignment]["scores"]["untouched"]
    assert set(scores) == set(exercises(assignment))
    assert all(score == 0 for score, _ in scores.values()), scores


def _wrong_answer_problems(r, assignment):
    problems = []
    for student, wrong in r["wrong"].items():
        if not wrong:
            continue
        for name, (score, top) in r["scores"][student].items():
            if full_marks(assignment, name, top) is None:  # GPU-only, no GPU here: blank or 0, never points
                if score:
                    problems.append(f"{student}: {name} scored {score}/{top} without a GPU")
                continue
            if score is None:
                problems.append(f"{student}: {name} was not graded")
                continue
            if name in wrong and score >= top:
                problems.append(f"{student}: not caught, {name} scored {score}/{top}")
            if name not in wrong and score < full_marks(assignment, name, top):
                problems.append(f"{student}: also lost points on {name} ({score}/{top})")
    return problems


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_wrong_answer_loses_its_exercise_points_and_only_those(graded, assignment):
    problems = _wrong_answer_problems(graded[assignment], assignment)
    assert not problems, "\n".join(problems)


@pytest.mark.soak
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_wrong_answer_alone_loses_its_exercise_points_and_only_those(graded_alone, assignment):
    """As above, one wrong answer per notebook: none is caught only because another exercise's broke its test."""
    problems = _wrong_answer_problems(graded_alone[assignment], assignment)
    assert not problems, "\n".join(problems)


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_grading_one_notebook_takes_under_the_time_budget(graded, assignment):
    seconds = _test_seconds(graded[assignment]["autograded"]["solutions"])
    assert seconds < TIME_BUDGET_S, f"{assignment}: the solutions notebook ran {seconds:.1f} s under autograde"


def test_trace_backward_may_not_hand_back_the_viz_frames():
    """chibigrad.viz.backward_frames watches the engine with hooks: the finished answer to 01.trace_backward."""
    import chibigrad as torch
    from autograder.grading.exercises import a01_graphs
    from chibigrad import viz

    def trace_backward(y):
        return [frame.node for frame in viz.backward_frames(y)[1:]]

    x = torch.tensor(1.5, requires_grad=True)
    assert trace_backward((x * x).sin() + x)  # it does answer the exercise
    failures = _failures(a01_graphs.trace_backward, _judge_student(trace_backward=trace_backward))
    assert failures and all("backward_frames is the course's finished version" in f or "got AssertionError" in f
                            for f in failures), failures  # the freed-graph case sees the refusal, not its error


ATTENTION_WITHOUT_MAX_SHIFT = """
def attention_weights(q, k):
    scores = q @ k.T / np.sqrt(q.shape[1])
    weights = scores.exp()
    return weights / weights.sum(1, keepdim=True)
"""


def test_08_attention_without_the_max_shift_loses_on_large_scores_only():
    """Issue 22 item 6: exp of scores in the thousands overflows without the max shift; every small case passes."""
    from autograder.grading.exercises import a08_debugging
    with pytest.raises(AssertionError, match=r"large scores\): forward: wrong values .* got nan"):
        a08_debugging.attention(_in_process_student(ATTENTION_WITHOUT_MAX_SHIFT))


def test_08_train_is_measured_with_the_engines_memory_counters(monkeypatch):
    """A notebook that rebinds chibigrad.memory to a fake reporting no growth does not hide a graph kept by
    retain_graph=True: the observer reads the counters the engine's nodes update."""
    import types

    import chibigrad
    from autograder.grading.exercises import a08_debugging
    fake = types.ModuleType("chibigrad.memory")
    fake.saved = fake.max_saved = lambda: 0
    fake.reset_peak = lambda: None
    monkeypatch.setattr(chibigrad, "memory", fake)
    monkeypatch.setitem(sys.modules, "chibigrad.memory", fake)
    student = _in_process_student("from chibigrad import optim\n" + (
        NOTEBOOKS / "wrong_answers" / "08_debugging" / "train__keeps_retain_graph.py").read_text())
    with pytest.raises(AssertionError, match="at its peak training held .* but one step needs"):
        a08_debugging.train(student)
