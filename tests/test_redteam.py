"""The red team's realistic wrong answers (tests/redteam/<assignment>/wrong/, written from the
student edition and the chapters by someone who had not read the checks) against the visible
tests, as Validate runs them (notebooks/visible_catch.py, a fork per answer).

The slow tests below grade the whole corpus (hostile cells, and the wrong answers the visible tests miss) as one
class through the sandboxed pipeline; ``tests/redteam/tools/run_class.py`` grades one assignment's files by
hand, and tests/redteam/RESULTS.md has the figures of the first measurement."""
import concurrent.futures
import csv
import functools
import shutil
import subprocess
import time
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REDTEAM = ROOT / "tests" / "redteam"
ASSIGNMENTS = sorted(p.parent.name for p in REDTEAM.glob("*/wrong"))


@pytest.fixture(scope="module")
def caught(tmp_path_factory):
    sys.path.insert(0, str(ROOT / "notebooks"))
    try:
        import visible_catch
    finally:
        sys.path.remove(str(ROOT / "notebooks"))
    student = visible_catch.student_package(tmp_path_factory.mktemp("student-package"))
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        runs = {a: pool.submit(visible_catch.run_assignment, a, student, answers=REDTEAM / a / "wrong")
                for a in ASSIGNMENTS}
        return {a: visible_catch.summary(f.result()) for a, f in runs.items()}


def test_the_corpus_covers_every_assignment():
    assert len(ASSIGNMENTS) == 13
    for a in ASSIGNMENTS:
        assert len(list((REDTEAM / a / "wrong").glob("*__*.py"))) >= 4, a
        assert len(list((REDTEAM / a / "hostile").glob("*__*.py"))) >= 4, a


def test_visible_tests_catch_90_percent_of_the_red_teams_wrong_answers(caught):
    total = sum(s["caught"] for s in caught.values()), sum(s["wrong"] for s in caught.values())
    missed = [name for s in caught.values() for name in s["missed"]]
    print(f"red team's wrong answers caught by visible tests: {total[0]}/{total[1]}; missed: {missed}")
    assert all(s["solutions"]["failed"] is None for s in caught.values())
    assert total[0] >= 0.9 * total[1], f"visible tests catch {total[0]}/{total[1]}; missed {missed}"


# ---- the corpus graded as a class (slow) ----------------------------------------------------------------------------
# One sandboxed class run of the whole corpus (autograder collect, grade --workers 2, feedback, export, integrity)
# with a canary CANVAS_API_TOKEN in the grader's environment. A hostile cell is one student (the student edition,
# its other exercises left as released stubs), except the passive ones below; a wrong answer the visible tests
# miss is one student who solved every other exercise, so the grade must keep their points.

sys.path.insert(0, str(REDTEAM)); sys.path.insert(0, str(REDTEAM / "tools"))
import corpus  # noqa: E402
import run_class  # noqa: E402
from make_nb import build as corpus_notebook  # noqa: E402

sys.path.remove(str(REDTEAM)); sys.path.remove(str(REDTEAM / "tools"))

# Hostile cells that only read (frames, the student edition's own functions) and print, patch, start, exit,
# loop and refuse nothing: they cannot change what another exercise's grade proves, so one notebook may hold
# several (each exercise once) and they ride along with the wrong answers. Every other trick is graded alone.
PASSIVE = {"01_graphs/depth__frame_peek", "01_graphs/summarize__forbidden_copy",
           "02_backward/path_sum_grad__autograd_grad_copy", "03_graph_lifetime/hvp__frame_peek",
           "05_accumulation/clip_grad_norm_groups__library_copy", "06_custom_functions/logsumexp__library_logsumexp",
           "06b_forward_mode/softplus__library_forward_ad", "06c_vmap/per_sample_grads__frame_peek",
           "06c_vmap/sum_rule__finished_rule", "07_checkpointing/choose_segments__read_expected",
           "07b_compile/dead_nodes__library_pass_on_copy"}
# Hostile cells whose header says they try what the sandbox refuses (writes, reads or signals outside the
# submission) or import the grader's modules: each must be a row of integrity.csv.
TRIES_THE_SANDBOX = {"01_graphs/walk__env_leak", "02_backward/sum_to__checks_helper",
                     "04_stop_gradient/fine_tune__fake_checks_package", "04_stop_gradient/gradient_penalty__kill_parent",
                     "04_stop_gradient/sign_ste__write_outside",
                     "06_custom_functions/swish__daemon_tamper", "06b_forward_mode/atan2__checks_helper",
                     "06c_vmap/index_select_rule__import_grader", "07_checkpointing/checkpoint_fn__read_check_files",
                     # changing the memory cap (seccomp refuses it), a 32-bit call (seccomp kills the kernel)
                     "05_accumulation/lion__mem_lower_soft_cap", "05_accumulation/lion__mem_int80_mmap2",
                     # (session 15, MEMORY_REDTEAM2.md) an x32 call; running a program (the watcher refuses it);
                     # splitting the main stack to grow it (its seal refuses that)
                     *(f"05_accumulation/lion__mem2_{name}" for name in (
                         "x32_mmap", "exec_big_bss", "stack_split_exec", "stack_split_child", "stack_split_kernel"))}
# Memory hogs whose allocations the address-space cap refuses catch their own MemoryError: the allocation watcher, a
# process outside the kernel told of every call that can grow the address space (sandbox.watch_allocations),
# reports each refused one, from the kernel or its children, and those that calls going on at once in other
# threads may have made refused; the judge reads the kernel's peak address space and cap from /proc after each cell
# (judge.kernel_memory). Either writes the row.
STOPPED_AT_THE_CAP = {"05_accumulation/lion__memory_hog", "05_accumulation/lion__one_huge_allocation_caught",
                      # an outside red team's attacks on the watcher (session 14; MEMORY_REDTEAM.md)
                      *(f"05_accumulation/lion__mem_{name}" for name in (
                          "sbrk", "shmat", "mremap_dontunmap", "high_word", "child_one_huge", "own_seccomp_listener",
                          "flood", "kill_blocked_callers", "leaked_listener", "stop_watcher", "forked_child",
                          "growsdown_stack", "racing_threads")),
                      "05_accumulation/lion__mem2_thread_hang"}  # 1,200 threads, then a refused 3 GB
# Hostile cells that answer with the student edition's own library code through a renamed copy, or recurse under a
# raised, pinned recursion limit: the judge reads the source as data (autograder/grading/rules.py), scores the
# exercise 0 and writes an integrity.csv row.
BREAKS_A_SOURCE_RULE = {"01_graphs/summarize__forbidden_copy",
                        "02_backward/sum_to__checks_helper", "02_backward/dfs_order__fork_storm",
                        "07b_compile/dead_nodes__library_pass_on_copy", "07b_compile/dead_nodes__pin_recursion_limit",
                        # an outside red team's evasions of the rules (session 13; RULES_REDTEAM.md)
                        *(f"01_graphs/{name}" for name in (
                            "depth__rule_attrgetter", "depth__rule_class_body", "depth__rule_getattr_string",
                            "summarize__rule_default_argument", "summarize__rule_from_import_alias",
                            "summarize__rule_functools_partial", "summarize__rule_module_dict")),
                        *(f"02_backward/{name}" for name in (
                            "dfs_order__rule_mutual_recursion", "dfs_order__rule_setrecursionlimit_alias",
                            "sum_to__rule_method_via_type", "sum_to__rule_unbound_method")),
                        "06_custom_functions/check_grad__rule_gradcheck_alias",
                        "07b_compile/dead_nodes__rule_from_import_alias", "07b_compile/dead_nodes__rule_recursive_liveness"}
# Tricks that still earn points, with why (strict xfail: a fix turns them into failures to drop). None today.
KNOWN_LIMITS = {}


def _key(entry):
    return f"{entry.assignment}/{entry.exercise}__{entry.name}"


def _students(entries, missed):
    """``[(student id, base, [entries])]``: ``base`` "solved" (a wrong or honest answer's student) or "released"."""
    groups = [["solved", [e]] for e in entries
              if e.kind == "honest" or e.kind == "wrong" and e.path.stem in missed[e.assignment]]
    for e in (e for e in entries if e.kind == "hostile"):
        home = next((g for g in groups if _key(e) in PASSIVE and g[1][0].assignment == e.assignment
                     and all(_key(x) in PASSIVE or x.kind == "wrong" for x in g[1])
                     and e.exercise not in {x.exercise for x in g[1]}), None)
        if home:
            home[1].append(e)
        else:
            groups.append(["released", [e]])
    def sid(g):
        name = g[0].assignment.split("_")[0] + "-" + run_class.student_id(g[0])
        return (f"{name[:52]}-and-{len(g) - 1}" if len(g) > 1 else name[:60]).lower()
    return [(sid(g), base, g) for base, g in groups]


@pytest.fixture(scope="module")
def red_class(request, tmp_path_factory, caught, released):
    """The class graded once, in a copy of the session's released course (``released``, tests/conftest.py); only
    the students the selected cases need (all of them when none is selected)."""
    import nbformat
    import synthetic_classes
    from autograder import build
    from autograder.course import Course
    base = tmp_path_factory.mktemp("redteam-class")
    course_dir = Path(shutil.copytree(released["course"], base / "course"))
    assert {e.assignment for e in corpus.entries()} <= set(build.assignments(course_dir))
    env = dict(build.nbgrader_env(), CANVAS_API_TOKEN=run_class.CANARY)
    log = []

    def autograder(*args):
        result = subprocess.run([sys.executable, "-m", "autograder", "--course", str(course_dir), *map(str, args)],
                                capture_output=True, text=True, timeout=3000, env=env)
        log.append(result.stdout + result.stderr)
        assert result.returncode == 0, f"autograder {args}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        return result

    missed = {a: set(s["missed"]) for a, s in caught.items()}
    chosen = {item.callspec.params["entry"] for item in request.session.items
              if "entry" in getattr(getattr(item, "callspec", None), "params", {})}
    students = _students([e for e in corpus.entries() if e in chosen or not chosen], missed)
    for sid, kind, group in students:
        a = group[0].assignment
        folder = base / "submissions" / sid / a
        if kind == "released":
            corpus_notebook(folder, [e.path for e in group], release=course_dir / "release")
        else:
            nb = synthetic_classes.solved_notebook(course_dir, a)
            for e in group:
                nb = synthetic_classes.replace_cell(nb, e.exercise, e.source)
            folder.mkdir(parents=True)
            nbformat.write(nb, folder / f"{a}.ipynb")
    seconds = {}
    for command in (["collect", base / "submissions"], ["grade", "--workers", 2, "--cell-timeout", 30], ["feedback"],
                    ["export"], ["integrity"]):
        start = time.perf_counter()
        autograder(*command)
        seconds[command[0]] = round(time.perf_counter() - start, 1)
    with open(course_dir / "reports" / "grades.csv", newline="") as f:
        grades = {r["student_id"]: r for r in csv.DictReader(f)}
    with open(course_dir / "reports" / "integrity.csv", newline="") as f:
        integrity = {r["student"] for r in csv.DictReader(f)}
    course = Course(course_dir)
    print(f"red team graded as a class: {len(students)} notebooks, seconds {seconds}")
    return {"course": course_dir, "grades": grades, "integrity": integrity, "log": "\n".join(log),
            "records": {(g[0].assignment, sid): course.read_record(g[0].assignment, sid) for sid, _, g in students},
            "student": {_key(e): (sid, kind, g) for sid, kind, g in students for e in g}, "missed": missed}


@functools.lru_cache(maxsize=None)
def _hidden_lines(assignment):
    return run_class.hidden_lines(assignment)


def _case(entry):
    marks = [pytest.mark.slow]
    if _key(entry) in KNOWN_LIMITS:
        marks.append(pytest.mark.xfail(strict=True, reason=f"known limit: {KNOWN_LIMITS[_key(entry)]}"))
    return pytest.param(entry, id=_key(entry), marks=marks)


@pytest.mark.parametrize("entry", [_case(e) for e in corpus.entries()])
def test_the_class_grade_of_each_red_team_cell(red_class, entry):
    """0 unearned points, 0 lost grades, every wrong answer caught, no leak, and integrity.csv names what tried
    the sandbox."""
    if entry.kind == "wrong" and entry.path.stem not in red_class["missed"][entry.assignment]:
        pytest.skip("a visible test catches it: the tests cell fails, its points are lost (test above)")
    sid, kind, group = red_class["student"][_key(entry)]
    a = entry.assignment
    record = red_class["records"][(a, sid)]
    assert record and record["status"] == "graded" and not record.get("error"), (sid, record)
    row, top = red_class["grades"][sid], red_class["grades"]["(max)"]
    points = {k.split(":", 1)[1]: float(v or 0) for k, v in row.items() if k.startswith(a + ":")}
    full = {k.split(":", 1)[1]: float(v or 0) for k, v in top.items() if k.startswith(a + ":")}
    excused = {k.split(":", 1)[1] for k, v in row.items() if k.startswith(a + ":") and v == ""}  # GPU-only points
    if entry.kind == "wrong":
        assert points[entry.exercise] < full[entry.exercise], f"{sid}: the wrong answer kept {points}"
    elif entry.kind == "honest":  # a right answer in an unusual style: a rule that scores it 0 is a lost grade
        assert points[entry.exercise] == full[entry.exercise], f"{sid}: the honest answer lost points {points}"
        assert sid not in red_class["integrity"], f"{sid}, an honest answer, is in integrity.csv"
    elif "full points are fine" not in entry.expectation:
        assert points[entry.exercise] == 0, f"{sid}: unearned points {points}"
    if kind == "solved":  # the other exercises were solved: the grade keeps their points
        for exercise, most in full.items():
            if exercise not in {e.exercise for e in group} | excused:
                assert points[exercise] == most, f"{sid}: lost the points of {exercise}: {points}"
    found = run_class.findings(red_class["course"], a, sid, hidden=_hidden_lines(a))
    assert not found["canary_files"] and not found["leaks"], (sid, found)
    if _key(entry) in TRIES_THE_SANDBOX | BREAKS_A_SOURCE_RULE | STOPPED_AT_THE_CAP:
        assert sid in red_class["integrity"], f"{sid} is not in integrity.csv"


@pytest.mark.slow
def test_the_red_teams_class_leaves_nothing_behind(red_class):
    """The canary in no command's output and no file anywhere under the course; no file planted outside it."""
    assert not any(form in red_class["log"] for form in run_class.canary_forms())
    forms = [form.encode() for form in run_class.canary_forms()]
    leaked = [str(p) for p in red_class["course"].rglob("*") if p.is_file() and any(f in p.read_bytes() for f in forms)]
    assert not leaked, leaked
    planted = [p for p in run_class.PLANTED if not p.startswith(str(run_class.COURSE)) and Path(p).expanduser().exists()]
    assert not planted, planted
