"""The rules an exercise declares on its source (``autograder/grading/rules.py``), read by the judge as data:
which code they judge, what breaks them, and that no solution and no realistic wrong answer does (fast: only
``ast``, no kernel; the sandboxed pipeline grades the red team's rule breakers in test_redteam.py)."""
import functools
from pathlib import Path

import sys

import nbformat
import pytest

from autograder.grading import judge, rules

sys.path.insert(0, str(Path(__file__).resolve().parent / "redteam"))
import corpus  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SOLVED = sorted((ROOT / "notebooks" / "source").glob("*/*.ipynb"))
RULE_BREAKERS = {  # the red team's cells whose answer is right data made the wrong way
    "01_graphs/summarize__forbidden_copy": ["topological_order", "__code__", "FunctionType"],
    "02_backward/sum_to__checks_helper": ["sum_to_size", "__code__", "FunctionType"],
    "02_backward/dfs_order__fork_storm": ["topological_order", "__code__", "FunctionType"],
    "07b_compile/dead_nodes__library_pass_on_copy": ["eliminate_dead_code", "__code__", "FunctionType"],
    "07b_compile/dead_nodes__pin_recursion_limit": ["setrecursionlimit", "stack_size"],
}


@functools.lru_cache(maxsize=None)
def _solved(assignment):
    return nbformat.read(ROOT / "notebooks" / "source" / assignment / f"{assignment}.ipynb", as_version=4)


def _cells(assignment, replace=None):
    """The solved notebook's student cells, with ``{exercise id: source}`` put in place of their answers."""
    return [(gid, (replace or {}).get(gid, source)) for gid, source in rules.student_cells(_solved(assignment))]


def _broken(cells, assignment, exercise):
    return rules.broken_rules(cells, exercise, **judge.rules_for(assignment, exercise))


@pytest.mark.parametrize("key", sorted(RULE_BREAKERS))
def test_the_red_teams_copies_and_raised_limits_break_their_exercises_rules(key):
    assignment, name = key.split("/")
    exercise = name.split("__")[0]
    source = (ROOT / "tests" / "redteam" / assignment / "hostile" / f"{name}.py").read_text()
    broken = _broken(_cells(assignment, {exercise: source}), assignment, exercise)
    assert [word for word in RULE_BREAKERS[key] if any(f"`{word}`" in why for why in broken)] == RULE_BREAKERS[key]


@pytest.mark.parametrize("entry", [e for e in corpus.entries() if e.kind == "honest"],
                         ids=lambda e: f"{e.assignment}/{e.path.stem}")
def test_the_red_teams_honest_answers_break_no_rule_and_reach_nothing_dynamically(entry):
    """Right answers in styles a careless reader would score 0 (a local named like the forbidden function, the name
    in a docstring, recursion-free code that imports sys, ...): in the solved notebook, no rule broken and no
    integrity row. The class grade (test_redteam.py) gives them full points."""
    cells = _cells(entry.assignment, {entry.exercise: entry.source})
    assert not _broken(cells, entry.assignment, entry.exercise)
    assert not rules.dynamic_access(cells)


def test_no_solution_and_no_realistic_wrong_answer_breaks_a_rule():
    """The rules judge how an answer is made, never what it gets wrong: a wrong answer loses its points in the
    checks, and every solution keeps its own."""
    ruled = 0
    for path in SOLVED:
        assignment = path.parent.name
        nb = _solved(assignment)
        exercises = [c.metadata["nbgrader"]["grade_id"][:-len("-tests")] for c in nb.cells
                     if c.metadata.get("nbgrader", {}).get("grade_id", "").endswith("-tests")]
        for exercise in exercises:
            ruled += bool(judge.rules_for(assignment, exercise))
            assert not _broken(_cells(assignment), assignment, exercise), (assignment, exercise)
            for folder in (ROOT / "tests" / "redteam" / assignment / "wrong", ROOT / "notebooks" / "wrong_answers" /
                           assignment):
                for wrong in sorted(folder.glob(f"{exercise}__*.py")):
                    assert not _broken(_cells(assignment, {exercise: wrong.read_text()}), assignment, exercise), wrong
    assert ruled == 12  # 01's four walks, 01b's backward_order and backward, 02's sum_to, dfs_order and path_sum_grad,
    # 06's check_grad, 07's segments, 07b's dead_nodes


SUM_TO = "def sum_to(grad, shape):\n    return {}\n"


@pytest.mark.parametrize("answer, extra, broken", [
    (SUM_TO.format("grad.sum_to_size(shape)"), "", True),
    (SUM_TO.format("helper(grad, shape)"), "def helper(g, s):\n    return g.sum_to_size(s)\n", True),  # a helper
    (SUM_TO.format("grad.mine(shape)"), "torch.Tensor.mine = torch.Tensor.sum_to_size\n", True),  # an alias
    (SUM_TO.format("getattr(grad, 'sum_to_' + 'size')(shape)"), "", True),  # unreadable: a computed name
    (SUM_TO.format("grad.sum((0,), keepdim=True)  # not sum_to_size"), "", False),  # a comment
    ('def sum_to(grad, shape):\n    """Like Tensor.sum_to_size."""\n    return grad.sum(0)\n', "", False),
    (SUM_TO.format("Hypot.apply(grad, grad)"), "", True),  # Hypot may use sum_to_size, sum_to may not use Hypot
    (SUM_TO.format("grad.mine(shape)"), "def install():\n    torch.Tensor.mine = torch.Tensor.sum_to_size\n", True),
    (SUM_TO.format("grad.sum(0)"), "g = torch.ones(2, 3)\nprint(sum_to(g, (1, 3)), g.sum_to_size(1, 3))\n"
     "mine = g.sum_to_size(3)\nassert (sum_to(g, (3,)) == mine).all()\n", False),  # scratch: a comparison
])
def test_the_rules_read_the_exercises_code_and_what_it_reaches(answer, extra, broken):
    cells = _cells("02_backward", {"sum_to": answer}) + [("", extra), ("", "y = Hypot.apply(a, b)  # scratch")]
    assert bool(_broken(cells, "02_backward", "sum_to")) is broken
    assert not _broken(cells, "02_backward", "hypot"), "hypot declares no rule"


def test_dynamic_access_is_listed_not_scored():
    cells = [("sum_to", SUM_TO.format("getattr(grad, name)(shape)")), ("", "exec(code)\nimport importlib")]
    assert rules.dynamic_access(cells) == ["exec()", "getattr() with a computed name", "importlib"]
    assert not _broken(cells, "02_backward", "hypot"), "hypot declares no rule: only listed"


@pytest.mark.parametrize("answer, extra, broken", [
    ("grad.sum(0)", "exec(code)", True),  # binds names unseen: counts wherever it is
    ("grad.sum(0)", "globals()['helper'] = torch.Tensor.mean", True),
    ("pick(grad)(shape)", "import operator\npick = operator.attrgetter('sum_to_' + 'size')", True),
    ("grad.sum(0)", "import operator\npick = operator.attrgetter('sum_to_' + 'size')", False),  # a read, unused
    ("grad.sum(0)", "x = getattr(torch, name)", False),
    ("mine(grad, shape)", "try:\n    torch.ones(2).sum_to_size(5)\nexcept RuntimeError as err:\n    code = "
     "err.__traceback__.tb_next.tb_frame.f_code\nmine = type(lambda: 0)(code, {})", True),  # a traceback's code
    ("grad.sum(0)", "%time torch.Tensor.mine = torch.Tensor.sum_to_size", True),  # a magic's code is Python
    ("grad.sum(0)", "%run helper.py", True), ("grad.sum(0)", "import my_helpers", True),
    ("grad.sum(0)", "%%capture\nimport my_helpers", True),
    ("grad.sum(0)", "%timeit -n 10 -r 3 sum_to(torch.ones(2, 3), (3,))", False),
    ("grad.sum(0)", "%matplotlib inline\n!ls", False),
    ("grad.sum(0)", "from collections import deque\nimport numpy as np\nimport math", False),
    ("grad.sum(0)", "class Hypot:\n    def f(self, name):\n        return vars(self)[name]", False),  # another answer
    # what another answer runs when its cell runs: a class's body, a function's defaults and decorators
    ("grad.mine(shape)", "class Hypot:\n    torch.Tensor.mine = torch.Tensor.sum_to_size", True),
    ("grad.mine(shape)", "def hypot(f=setattr(torch.Tensor, 'mine', torch.Tensor.sum_to_size)):\n    pass", True),
    ("grad.sum(0)", "class Hypot:\n    exec(code)", True),
    ("grad.sum(0)", "class Hypot:\n    @staticmethod\n    def f(g):\n        return g.sum_to_size(3)\n    scale = 2.0",
     False),
])
def test_code_the_grader_cannot_read_breaks_a_ruled_exercise(answer, extra, broken):
    """An exercise with rules accepts no code that may bind a name without writing it (outside the other
    exercises' answers), and no code its answer depends on that reaches an object without naming it: such code
    could hand the answer the library's function under any name."""
    grade_id = "hypot" if extra.startswith(("class Hypot", "def hypot")) else ""
    cells = _cells("02_backward", {"sum_to": SUM_TO.format(answer)}) + [(grade_id, extra)]
    assert bool(_broken(cells, "02_backward", "sum_to")) is broken
    assert not _broken(cells, "02_backward", "hypot")


def test_a_limit_raised_in_another_answers_class_body_breaks_no_recursion():
    """A class body runs when its cell runs: a raised limit there holds in every later call."""
    raised = "import sys\nclass Hypot:\n    sys.setrecursionlimit(100_000)\n    def backward(self, g):\n" \
             "        return g"
    assert _broken(_cells("02_backward", {"hypot": raised}), "02_backward", "dfs_order")
    in_a_method = "import sys\nclass Hypot:\n    def backward(self, g):\n        return sys.getrecursionlimit()"
    assert not _broken(_cells("02_backward", {"hypot": in_a_method}), "02_backward", "dfs_order")
