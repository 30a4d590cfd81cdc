"""Judged grading (``autograder/grading/judge.py``): the hidden checks run in the grader's process, the
student's code in another, and only plain data crosses.

Fast tests check the pieces in-process: the protocol refuses anything but plain data, the runner answers
with data and errors, cases are built with the release's classes, the environment allowlist, and that a
judged check never sends an expected answer. The slow ones grade 01b_engine notebooks for real: with
``nbgrader autograde`` (what ``make grade`` and ``tests/test_exercises.py`` run) and with ``autograder
grade`` (sandboxed workers) while a canary token sits in the grader's environment.
"""
import base64
import io
import json
import pickle
import subprocess
import sys
import time
import warnings
from pathlib import Path

import nbformat
import numpy as np
import pytest

import synthetic_classes
from autograder import build
from autograder.grading import judge, protocol, runner, sandbox

ROOT = Path(__file__).resolve().parent.parent
CANARY = "canary-7f3a9c-do-not-leak"


def _setup_namespace(assignment="01b_engine"):
    """The notebook's namespace after its locked cells and solutions ran (as the kernel has it)."""
    nb = nbformat.read(build.NOTEBOOKS / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    namespace, setup = {}, ""
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and (meta.get("solution") or meta.get("grade_id") == "setup"):
            exec(cell.source, namespace)
            setup = cell.source if meta.get("grade_id") == "setup" else setup
    return namespace, setup


def _in_process(namespace, sent=None):
    """A transport that answers with the runner in this process (and records what was sent)."""
    def transport(request, timeout):
        if sent is not None:
            sent.append(protocol.Call.from_json(request))
        return runner.answer(protocol.Call.from_json(request), namespace), None
    return transport


# ---- the protocol ----------------------------------------------------------------------------------------------

def test_the_protocol_carries_plain_data_and_refuses_anything_else():
    value = {"a": [1, 2.5, None, True, "x"], "t": (np.arange(3.0), np.float64(2.0)), "n": float("nan")}
    back = protocol.decode(json.loads(json.dumps(protocol.encode(value))))
    assert back["a"] == [1, 2.5, None, True, "x"] and np.isnan(back["n"])
    assert isinstance(back["t"], tuple) and np.array_equal(back["t"][0], np.arange(3.0)) and back["t"][1] == 2.0
    for bad in (object(), {1: 2}, np.array([object()]), {1, 2}, b"bytes"):
        with pytest.raises(protocol.ProtocolError):
            protocol.encode(bad)
    buffer = io.BytesIO()
    np.save(buffer, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    pickled = {"ndarray": base64.b64encode(buffer.getvalue()).decode()}
    for forged in (pickled, {"pickle": base64.b64encode(pickle.dumps(1)).decode()}, {"tuple": 1, "dict": {}}):
        with pytest.raises(protocol.ProtocolError):
            protocol.decode(forged)
    good = protocol.Reply(ok=True, value=1).to_json()
    assert protocol.Reply.from_json(good).value == 1
    with pytest.raises(protocol.ProtocolError):
        protocol.Reply.from_json(json.dumps(dict(json.loads(good), verdict="pass")))


# ---- the runner (student side) ---------------------------------------------------------------------------------

def test_the_runner_answers_with_data_and_names_errors():
    def deep(n):
        return 0 if n == 0 else 1 + deep(n - 1)

    def warns(x):
        warnings.warn("careful")
        return x

    namespace = {"double": lambda a: 2 * a, "fails": lambda a: 1 / 0, "deep": deep, "warns": warns,
                 "opaque": lambda a: object(), "chatty": lambda a: print("hello") or a}
    ask = judge.Student(_in_process(namespace))
    assert np.array_equal(ask.call("double", {"recipe": "args", "args": [np.ones(2)]}), [2.0, 2.0])
    assert ask.call("chatty", {"recipe": "args", "args": [3]}) == 3
    for name, arg, message in (("fails", 1, "raised ZeroDivisionError: division by zero"),
                               ("deep", 5000, "RecursionError"), ("warns", 1, "emitted a warning (UserWarning"),
                               ("opaque", 1, "raised TypeError: returned a object"),
                               ("missing", 1, "the notebook defines no function 'missing'")):
        with pytest.raises(AssertionError, match=message.replace("(", r"\(")):
            ask.call(name, {"recipe": "args", "args": [arg], "what": name})
    assert ask.call("deep", {"recipe": "args", "args": [500]}) == 500, "the default limit, counted from the call"


def test_cases_are_built_with_the_release_setup_not_a_replaced_class():
    """A later cell that replaces the setup's Tensor (to mirror every op into chibigrad, say) is undone: the
    runner runs the release's setup again, so the case and the student's code see the instructor's classes."""
    namespace, setup = _setup_namespace()
    original = namespace["Tensor"]
    namespace["Tensor"] = type("Mirror", (original,), {})
    seen = []
    namespace["probe"] = lambda out: seen.append((type(out).__name__, namespace["Tensor"].__name__)) or 0
    judge.Student(_in_process(namespace), setup).call("probe", {"recipe": "chain", "n": 3})
    assert seen == [("Tensor", "Tensor")]


def test_a_judged_check_never_sends_an_expected_answer():
    """What the student process receives are recipes and inputs; the answers the checks compare with are
    computed in the judge and never sent (so no frame, global or gc walk in the student process finds them)."""
    from autograder.grading.exercises.a02_backward import _numpy_sum_to
    from autograder.grading.exercises import a01b_engine
    namespace, setup = _setup_namespace()
    sent = []
    a01b_engine.formulas(judge.Student(_in_process(namespace, sent), setup))
    a01b_engine.accumulate(judge.Student(_in_process(namespace, sent), setup))
    arrays = [a for call in sent for a in _arrays(call.case)]
    expected = []  # what the checks compare with, recomputed here
    for call in sent:
        if call.name == "div_backward":
            g, a, b = call.case["args"]
            expected += [g / b, -g * a / b ** 2]
        if call.name == "accumulate" and call.case.get("first") is not None:
            g, _, shape = call.case["calls"][0]
            expected.append(call.case["first"] + _numpy_sum_to(g, shape))
    assert expected and not any(np.allclose(e, a) for e in expected for a in arrays if e.shape == a.shape)


def _arrays(value):
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _arrays(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _arrays(v)


def test_the_judge_turns_transport_problems_into_failures():
    for transport, message in ((lambda r, t: (None, "took longer than 2 s"), "walk on x: took longer than 2 s"),
                               (lambda r, t: ('{"ok": true}', None), "answered outside the grading protocol"),
                               (lambda r, t: ("not json", None), "answered outside the grading protocol")):
        with pytest.raises(AssertionError, match=message):
            judge.Student(transport).call("walk", {"recipe": "args", "args": [], "what": "x"})


def test_the_student_process_environment_is_an_allowlist():
    env = sandbox.student_environment({"PATH": "/usr/bin", "LC_ALL": "C.UTF-8", "CANVAS_API_TOKEN": CANARY,
                                       "AWS_SECRET_ACCESS_KEY": CANARY, "CHIBIGRAD_SIMULATE_CUDA": "auto",
                                       "JUPYTER_CONFIG_DIR": "/home/instructor/.jupyter"}, HOME="/sandbox/tmp")
    assert env == {"PATH": "/usr/bin", "LC_ALL": "C.UTF-8", "CHIBIGRAD_SIMULATE_CUDA": "auto", "HOME": "/sandbox/tmp"}


def test_the_student_lib_has_the_runner_and_the_student_edition_only():
    lib = judge.student_lib()
    files = {str(p.relative_to(lib)) for p in lib.rglob("*.py")}
    assert {"autograder/grading/runner.py", "autograder/grading/protocol.py", "autograder/grading/cases.py"} <= files
    assert not any(f.startswith(("autograder/checks", "autograder/grading/exercises")) for f in files)
    assert "autograder/grading/judge.py" not in files
    stubbed = [f for f in files if "NotImplementedError(\"Exercise" in (lib / f).read_text()
               or "NotImplementedError('Exercise" in (lib / f).read_text()]
    assert stubbed, "the student edition of chibigrad: exercise answers stubbed"
    assert not any("# BEGIN EXERCISE" in (lib / f).read_text() for f in files)


# ---- graded for real ---------------------------------------------------------------------------------------------

HOSTILE_01B = '''# hostile: looks for the grader, its answers and its secrets from inside the kernel
import gc, os, sys
print("env:", sorted(os.environ.items()))
for name in ("autograder.checks", "autograder.grading.judge", "autograder.grading.exercises.a01b_engine"):
    try:
        __import__(name)
        print("IMPORTED", name)
    except ImportError as err:
        print("refused:", name, type(err).__name__)

def backward(tensor, grad=None, retain_graph=False):
    """Fills every leaf's .grad with numbers found in the caller's frames and in gc: the expected answers,
    if the grader had them in this process."""
    found = []
    frame = sys._getframe(1)
    while frame is not None:
        found += [v for v in frame.f_locals.values() if isinstance(v, float)]
        frame = frame.f_back
    found += [o for o in gc.get_objects() if isinstance(o, float)][:1000]
    todo = [tensor.node]
    while todo:
        node = todo.pop()
        if node is None:
            continue
        if hasattr(node, "tensor"):
            node.tensor.grad = found[0] if found else 0.0
        todo += node.edges
'''


def _hostile_notebook(course_dir):
    nb = synthetic_classes.solved_notebook(course_dir, "01b_engine")
    cell = next(c for c in nb.cells if c.id == "backward")
    cell.source = HOSTILE_01B
    return nb


@pytest.mark.slow
def test_judged_grading_in_the_sandbox_scores_and_leaks_nothing(tmp_path):
    """``autograder grade`` on 01b_engine with a canary token in the grader's environment: the solutions
    score 12/12; a submission that snoops for the grader scores 0 on that exercise and on the ruled one (its
    computed import breaks the source rules), imports none of the
    grader's checks, and the token appears in no file grading or feedback writes. ``make grade`` of that
    submission gives it the same scores and leaves the file as it was."""
    course_dir = synthetic_classes.course_copy(tmp_path, ["01b_engine"])
    env = dict(build.nbgrader_env(), CANVAS_API_TOKEN=CANARY)
    run = lambda *args: subprocess.run([sys.executable, "-m", "autograder", "--course", str(course_dir), *args],  # noqa
                                       capture_output=True, text=True, timeout=1200, env=env)
    assert run("release", "--all", "--no-zip", "--dest", str(tmp_path / "student")).returncode == 0
    for student, nb in (("solved", synthetic_classes.solved_notebook(course_dir, "01b_engine")),
                        ("hostile", _hostile_notebook(course_dir))):
        target = course_dir / "submitted" / student / "01b_engine" / "01b_engine.ipynb"
        target.parent.mkdir(parents=True)
        nbformat.write(nb, target)
    graded = run("grade", "--workers", "2", "--cell-timeout", "60")
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    assert run("feedback").returncode == 0
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}", "chibigrad") as gb:
        scores = {s: {g.name[:-len("-tests")]: g.score for g in gb.find_submission_notebook(
            "01b_engine", "01b_engine", s).grades} for s in ("solved", "hostile")}
    assert scores["solved"] == {"backward_order": 3, "accumulate": 2, "formulas": 3, "backward": 4}, scores
    # the cell imports by a computed name: the grader cannot read which code it binds, so the ruled exercise
    # (backward_order, no recursion) is broken too
    assert scores["hostile"] == {"backward_order": 0, "accumulate": 2, "formulas": 3, "backward": 0}, scores
    hostile = course_dir / "submitted" / "hostile" / "01b_engine" / "01b_engine.ipynb"
    before = hostile.read_bytes()
    assert {name: score for name, score, *_ in build.self_grade(hostile)[1]} == scores["hostile"], \
        "make grade (self-study) gives the score the instructor's autograder gives"
    assert hostile.read_bytes() == before, "make grade only reads the notebook"
    autograded = nbformat.read(course_dir / "autograded" / "hostile" / "01b_engine" / "01b_engine.ipynb", as_version=4)
    printed = "".join(o.get("text", "") for c in autograded.cells if c.id == "backward" for o in c.outputs)
    assert "refused: autograder.checks ModuleNotFoundError" in printed and "IMPORTED" not in printed, printed
    assert "env: [" in printed and sandbox.POLICY_ENV not in printed, "the sandbox's paths stay the grader's"
    leaked = [str(p) for p in course_dir.rglob("*") if p.is_file() and CANARY.encode() in p.read_bytes()]
    assert not leaked, f"the canary token is in {leaked}"


def test_importing_the_graders_modules_in_a_judged_kernel_is_reported(tmp_path):
    """The audit hook of a judged kernel reports an import of the grader's modules beyond the runner's (whether
    or not it succeeds): the worker turns it into a note that integrity.csv lists."""
    events = tmp_path / "events"
    code = f"""
import os, sys
from autograder.grading import judge, sandbox
fd = os.open({str(events)!r}, os.O_WRONLY | os.O_CREAT)
sandbox.install_audit_hook(fd, [{str(tmp_path)!r}], grader_modules=judge.STUDENT_MODULES)()
for name in ("autograder.grading.cases", "autograder.checks.a01_graphs", "autograder.grading.exercises.a09_gpu"):
    try:
        __import__(name)
    except ImportError:
        pass
import importlib
try:  # import_module raises no audit event for a module it cannot find
    importlib.import_module("autograder.grading.exercises.a06b_forward_mode")
except ImportError:
    pass
"""
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)
    reported = [json.loads(line) for line in events.read_text().splitlines()]
    assert ["import", "autograder.checks.a01_graphs"] in reported
    assert ["import", "autograder.grading.exercises.a09_gpu"] in reported
    assert ["import", "autograder.grading.exercises.a06b_forward_mode"] in reported
    assert not any(detail.startswith("autograder.grading.cases") for _, detail in reported), reported
    from autograder import integrity
    assert any(sign in "imported outside its allowance (the grader's modules ...)" for sign in integrity.TAMPER_SIGNS)


# ---- 06c_vmap: whether a rule batches, timed by the judge ------------------------------------------------------------

def _timed(namespace):
    """The in-process transport with the judge's time limit: an answer that comes after ``timeout`` is none."""
    def transport(request, timeout):
        begin = time.monotonic()
        text = runner.answer(protocol.Call.from_json(request), namespace)
        return (text, None) if time.monotonic() - begin <= timeout else (None, f"took longer than {timeout:g} s")
    return transport


def test_a_loop_that_hides_its_op_count_fails_the_judges_timing(monkeypatch):
    from autograder.grading.exercises import a06c_vmap
    from chibigrad.autograd import function
    monkeypatch.setattr(a06c_vmap, "BIG_BATCH", 50_000)  # a loop over them: about 1 s; the rule: a few ms
    monkeypatch.setattr(a06c_vmap, "BIG_LIMIT", 0.5)
    namespace, _ = _setup_namespace("06c_vmap")
    case = ("sum_rule", "sum_rule on a large batch", [{"uniform": [2, 50_000]}, 1, -1, False],
            lambda x, *_: x.sum(0), 7)
    a06c_vmap.expect_fast(judge.Student(_timed(namespace)), *case)

    def hiding_loop(x, x_bdim, dim, keepdim=False):  # the red team's: the op counter's original put back meanwhile
        counted = function._apply
        function._apply = next(c.cell_contents for c in counted.__closure__
                               if getattr(c.cell_contents, "__name__", "") == "_apply")
        try:
            return namespace["torch"].stack([s.sum(dim, keepdim) for s in x.unbind(x_bdim)]), 0
        finally:
            function._apply = counted
    namespace["sum_rule"] = hiding_loop
    big = {"recipe": "vmap_big", "seed": 1, "rows": [0], "specs": case[2]}
    ops = judge.Student(_in_process(namespace)).call("sum_rule", big, observe="batch_rule_rows")["ops"]
    assert ops <= 1, ops  # the op count the student process reports misses its loop: only the judge's clock sees it
    with pytest.raises(AssertionError, match="no answer within 0.5 s"):
        a06c_vmap.expect_fast(judge.Student(_timed(namespace)), *case)


def test_a_failed_case_reads_in_a_few_lines():
    """A wrong 50x40 gradient names how many values differ and the first one, arrays summarised; any message the
    judge writes into the notebook is cut to its first lines, saying how much was left out (issue 28: 20 KB)."""
    with pytest.raises(AssertionError) as err:
        judge.expect_array(np.zeros((50, 40)) + np.eye(50, 40), np.zeros((50, 40)), "x.grad")
    message = str(err.value)
    assert message.startswith("x.grad: wrong values at 40 of 2000 positions; the first, (0, 0): got 1, expected 0")
    assert len(message.splitlines()) <= 14 and "..." in message
    dump = "\n".join(f"node {i}: " + "AddBackward0 " * 10 for i in range(2000))
    shown = judge.verdict_output(dump).evalue
    assert len(shown) <= judge.MESSAGE_CHARS + 80 and len(shown.splitlines()) <= judge.MESSAGE_LINES + 1
    assert shown.startswith("node 0: ") and shown.endswith("more characters of this message not shown]")
    assert judge.verdict_output("b.grad: expected [1, 2], got [1, 3]").evalue == "b.grad: expected [1, 2], got [1, 3]"


def test_per_sample_grads_that_hide_their_backward_passes_fail_the_judges_timing(monkeypatch):
    from autograder.grading.exercises import a06c_vmap
    from chibigrad.autograd import engine
    monkeypatch.setattr(a06c_vmap, "PSG_BATCH", 3_000)  # one grad per sample: about 3 s; vmap(grad): a few ms
    monkeypatch.setattr(a06c_vmap, "PSG_LIMIT", 0.5)
    namespace, _ = _setup_namespace("06c_vmap")
    a06c_vmap.expect_one_pass(judge.Student(_timed(namespace)), "1 backward pass", 7)
    loss, grad, torch = namespace["loss"], namespace["grad"], namespace["torch"]

    def hiding_loop(params, xs, ys):  # the red team's: the pass counter's original put back meanwhile
        counted = engine.execute
        engine.execute = next(c.cell_contents for c in counted.__closure__
                              if getattr(c.cell_contents, "__name__", "") == "execute")
        try:
            rows = [grad(loss)(params, xs[i:i + 1], ys[i:i + 1]) for i in range(xs.shape[0])]
        finally:
            engine.execute = counted
        return tuple(torch.stack([r[k] for r in rows]) for k in range(len(params)))
    namespace["per_sample_grads"] = hiding_loop
    small = {"recipe": "vmap_params_big", "seed": 1, "rows": [0], "specs": [
        {"uniform": [4, 3]}, {"uniform": [3]}, {"uniform": [6, 4]}, {"integers": 3, "shape": [6]}]}
    passes = judge.Student(_in_process(namespace)).call("per_sample_grads", small, observe="per_sample_rows")["passes"]
    assert passes == 0, passes  # the count the student process reports misses its loop: only the judge's clock sees it
    with pytest.raises(AssertionError, match="no answer within 0.5 s"):
        a06c_vmap.expect_one_pass(judge.Student(_timed(namespace)), f"{passes} backward passes", 7)


# ---- partial credit per named case -----------------------------------------------------------------------------

def _wrong(namespace, assignment, name):
    """``namespace`` with the wrong answer ``notebooks/wrong_answers/<assignment>/<name>.py`` in place."""
    exec((ROOT / "notebooks" / "wrong_answers" / assignment / f"{name}.py").read_text(), namespace)
    return namespace


def test_a_check_with_named_cases_earns_the_points_of_the_cases_that_pass():
    """A walk capped at 20,000 nodes passes every visible test; the judge fails its deep graph only, so it earns
    the small and larger graphs' share of the cell's 2 points, and the feedback lists each case with its points."""
    from autograder.grading.exercises import a01_graphs
    namespace, setup = _setup_namespace("01_graphs")
    student = judge.Student(_in_process(_wrong(namespace, "01_graphs", "walk__stops_at_20000")), setup)
    a01_graphs.walk(student)
    points, table, message = judge.score_cases(student.cases, 2.0)
    assert points == 1.5
    assert table.splitlines() == ["Hidden cases: 1.5 of 2 points",
                                  "  small graphs (leaves, constants, shared leaves, two outputs): 1/1",
                                  "  larger graphs (12 diamonds in a row, random graphs, a freed graph): 0.5/0.5",
                                  "  deep graph (a chain of 25,000 additions): 0/0.5"]
    assert message.startswith("hidden case 'deep graph (a chain of 25,000 additions)' failed: walk on a chain of "
                              "25000 additions")


def test_a_wrong_answer_right_on_a_chain_earns_nothing_for_the_deep_graph():
    """The red team's depth by the widest child is right on a chain only: the deep graph tests that a right answer
    scales, so it is not graded while the smaller graphs fail (the answer earns 0, not the deep case's share)."""
    from autograder.grading.exercises import a01_graphs
    namespace, setup = _setup_namespace("01_graphs")
    exec((ROOT / "tests" / "redteam" / "01_graphs" / "wrong" / "depth__widest_child.py").read_text(), namespace)
    student = judge.Student(_in_process(namespace), setup)
    a01_graphs.depth(student)
    points, table, message = judge.score_cases(student.cases, 3.0)
    assert points == 0, table
    assert "not graded until the smaller graphs pass" in student.cases[-1][2]


def test_hypots_constant_input_case_fails_a_backward_that_ignores_grad_output():
    """Each case of Hypot passes a gradient other than ones, so a backward that ignores grad_output earns none."""
    from autograder.grading.exercises import a02_backward
    namespace, setup = _setup_namespace("02_backward")
    source = (ROOT / "tests" / "redteam" / "02_backward" / "hostile" / "hypot__patch_gradcheck.py").read_text()
    exec(source[source.index("class Hypot"):], namespace)
    student = judge.Student(_in_process(namespace), setup)
    a02_backward.hypot(student)
    assert judge.score_cases(student.cases, 2.0)[0] == 0, student.cases


def test_sum_to_wrong_answers_lose_the_broadcasting_cases_they_get_wrong():
    from autograder.grading.exercises import a02_backward
    namespace, setup = _setup_namespace("02_backward")
    lost = {}
    for name in ("sum_to__dims_not_shifted", "sum_to__leading_dims_only"):
        student = judge.Student(_in_process(_wrong(dict(namespace), "02_backward", name)), setup)
        a02_backward.sum_to(student)
        points, table, message = judge.score_cases(student.cases, 2.0)
        lost[name] = (points, [case for case, _, failure in student.cases if failure])
        assert "  no broadcasting: 0.25/0.25" in table.splitlines()
    assert lost == {"sum_to__dims_not_shifted": (1.75, ["broadcast over both"]),
                    "sum_to__leading_dims_only": (1.0, ["broadcast over size-1 dimensions", "broadcast over both",
                                                        "keeps float32"])}


def test_case_points_are_shared_out_in_proportion_and_a_failure_outside_a_case_costs_the_cell():
    cases = [("a", 1, None), ("b", 2, "b: got 1, expected 2"), ("c", 1, "c: wrong"), ("d", 2, None)]
    points, table, message = judge.score_cases(cases, 3.0)
    assert points == 1.5 and table.splitlines()[1:] == ["  a: 0.5/0.5", "  b: 0/1", "  c: 0/0.5", "  d: 1/1"]
    assert message == "hidden case 'b' failed: b: got 1, expected 2\n(1 more failed: their points are listed above)"
    student = judge.Student(lambda r, t: (None, "took longer than 30 s (an endless loop?)"))
    with student.case("slow"):
        student.call("walk", {"recipe": "args", "args": []})
    with student.case("next"):  # not run: the check's time stays bounded by one timeout
        student.call("walk", {"recipe": "args", "args": [], "what": "y"})
    assert [f for _, _, f in student.cases] == ["walk on args: took longer than 30 s (an endless loop?)",
                                                "walk on y: not run: an earlier call failed (took longer than 30 s)"]


def test_only_a_cell_whose_sole_error_is_the_judges_verdict_gets_partial_points(monkeypatch):
    from types import SimpleNamespace
    from nbgrader.preprocessors import SaveAutoGrades
    monkeypatch.setattr(SaveAutoGrades, "_add_score", lambda self, cell, resources: None)
    grade = SimpleNamespace(auto_score=0.0)
    saver = judge.JudgedSaveAutoGrades()
    saver.notebook_id = saver.assignment_id = saver.student_id = "x"
    saver.gradebook = SimpleNamespace(find_grade=lambda *a: grade, db=SimpleNamespace(commit=lambda: None))
    verdict = judge.verdict_output("hidden case 'deep' failed:\nwalk on deep: RecursionError")
    resources = {judge.PARTIAL: {"walk-tests": (1.5, verdict.evalue)}}
    cell = nbformat.v4.new_code_cell(metadata={"nbgrader": {"grade_id": "walk-tests", "points": 2}})
    cell.outputs = [verdict]
    saver._add_score(cell, resources)
    assert grade.auto_score == 1.5
    grade.auto_score = 0.0
    cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text="warning"), verdict]
    saver._add_score(cell, resources)
    assert grade.auto_score == 0.0, "stderr (or any other error) still scores the cell 0"


def test_04s_checks_send_inputs_never_the_answers():
    """04_stop_gradient's checks send seeds and written-out inputs (the critic's weights included); what they
    compare with (the EMA targets after each update, the binarised layer after each step, the penalty's weight
    gradient) is computed in the judge and never sent."""
    from autograder.grading import cases
    from autograder.grading.exercises import a04_stop_gradient as a04
    namespace, setup = _setup_namespace("04_stop_gradient")
    sent = []
    for check in (a04.sign_ste, a04.ema_update, a04.gradient_penalty):
        check(judge.Student(_in_process(namespace, sent), setup))
    expected = []
    for call in sent:
        case = call.case
        if call.observe == "ema":
            target, online = (a04._arrays(m) for m in cases.ema_pair_04(case["pair"]))
            expected += [case["decays"][0] * target[n] + (1 - case["decays"][0]) * online[n] for n in target
                         if "running" not in n and "num_batches" not in n]
        if call.observe == "binarised":
            w = case["w"]
            w = w - 0.3 * np.where(np.abs(w) <= 1, 2 * (case["inputs"] @ np.sign(w).T - case["targets"]).T
                                   @ case["inputs"] / case["targets"].size, 0.0)
            expected.append(w)
        if call.observe == "penalty" and "generator" in case:
            fake = case["noise"] @ case["generator"][0].T + case["generator"][1]
            points = case["alpha"] * case["real"] + (1 - case["alpha"]) * fake
            expected.append(a04._weight_gradient(case["critic"], points))
    arrays = [a for call in sent for a in _arrays(call.case)]
    assert {"ema", "binarised", "penalty"} <= {call.observe for call in sent} and expected
    assert not any(np.allclose(e, a) for e in expected for a in arrays if e.shape == a.shape)
