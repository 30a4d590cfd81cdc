"""Fixtures shared across test files: set-up that costs minutes is done once a session."""
import shutil
import time

import pytest

from autograder import build


@pytest.fixture(scope="session")
def released(tmp_path_factory):
    """The course copied to a temporary directory and released from there, once a session (every assignment:
    13 ``nbgrader generate_assignment`` runs), shared by test_exercises.py and test_redteam.py; a test that
    changes the course works on a copy of it."""
    base = tmp_path_factory.mktemp("course")
    course_dir = base / "course"
    course_dir.mkdir()
    shutil.copy(build.NOTEBOOKS / "nbgrader_config.py", course_dir)
    for sub in ("source", "source_text"):
        shutil.copytree(build.NOTEBOOKS / sub, course_dir / sub)
    start = time.perf_counter()
    student = build.release_student_edition(base / "student", course_dir=course_dir)
    return {"course": course_dir, "student": student, "release_s": time.perf_counter() - start}

