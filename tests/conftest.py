"""Fixtures shared across test files: set-up that costs minutes is done once a session."""
import shutil
import subprocess
import sys
import time

import pytest

from autograder import build


@pytest.fixture(scope="session")
def released(tmp_path_factory):
    """The course copied to a temporary directory and released from there, once a session (every assignment:
    13 assignments generated, the student edition written), shared by test_exercises.py and test_redteam.py; a test that
    changes the course works on a copy of it."""
    base = tmp_path_factory.mktemp("course")
    course_dir = base / "course"
    course_dir.mkdir()
    shutil.copy(build.NOTEBOOKS / "nbgrader_config.py", course_dir)
    for sub in ("source", "source_text"):
        shutil.copytree(build.NOTEBOOKS / sub, course_dir / sub)
    start = time.perf_counter()
    # `autograder release` generates in one process: 18 s here, where build.release_student_edition's 13 nbgrader
    # processes took 83-137 s (`make lab`'s release is tested on its own, test_exercises.py)
    subprocess.run([sys.executable, "-m", "autograder", "--course", str(course_dir), "release", "--all", "--no-zip",
                    "--dest", str(base / "student")], check=True, capture_output=True, env=build.nbgrader_env())
    return {"course": course_dir, "student": base / "student", "release_s": time.perf_counter() - start}

