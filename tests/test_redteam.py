"""The red team's realistic wrong answers (tests/redteam/<assignment>/wrong/, written from the
student edition and the chapters by someone who had not read the checks) against the visible
tests, as Validate runs them (notebooks/visible_catch.py, a fork per answer).

Its hostile submissions are graded by ``tests/redteam/tools/run_class.py`` (30-45 minutes of
sandboxed grading: not part of make test); their figures are in tests/redteam/RESULTS.md."""
import concurrent.futures
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
