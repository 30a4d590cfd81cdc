"""Tests of the repository foundation: pinned requirements, book config, CI entry point.

These never import chibigrad: they check the files that every other part stands on.
"""

import os
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent

DIRECT_REQUIREMENTS = [
    "numpy",
    "pytest",
    "pytest-xdist",
    "hypothesis",
    "matplotlib",
    "jupyter-book",
    "jupytext",
    "nbgrader",
    "jupyterlab",
    "ipykernel",
    "nbformat",
    "nbclient",
]


def _normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_lines():
    lines = []
    for raw in (ROOT / "requirements.txt").read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            lines.append(line)
    return lines


def _pins():
    return {_normalize(line.split("==")[0]): line.split("==")[1] for line in _requirement_lines()}


def test_every_requirement_is_pinned_with_double_equals():
    lines = _requirement_lines()
    assert lines, "requirements.txt is empty"
    pattern = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9][A-Za-z0-9.+!-]*$")
    bad = [line for line in lines if not pattern.match(line)]
    assert not bad, f"not pinned with ==: {bad}"


def test_requirements_have_no_duplicates():
    names = [_normalize(line.split("==")[0]) for line in _requirement_lines()]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    assert not duplicates, f"listed twice: {duplicates}"


def test_direct_requirements_are_all_pinned():
    pins = _pins()
    missing = [name for name in DIRECT_REQUIREMENTS if _normalize(name) not in pins]
    assert not missing, f"missing from requirements.txt: {missing}"


def test_jupyter_book_is_version_1():
    # Jupyter Book 2 cannot build offline; the book is a Jupyter Book 1 project.
    assert _pins()["jupyter-book"].split(".")[0] == "1"


def test_installed_versions_match_the_pins():
    # The suite runs in the venv built from requirements.txt: it must be that set.
    pins = _pins()
    for name in ["numpy", "pytest", "jupyter-book", "nbgrader", "sphinx", "myst-nb"]:
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            pytest.skip(f"{name} not installed here: not running in the project venv")
        assert installed == pins[_normalize(name)], name


def _toc_files(entry):
    """Yield every `file` (and `root`) named anywhere in a _toc.yml structure."""
    if isinstance(entry, dict):
        for key in ("root", "file"):
            if key in entry:
                yield entry[key]
        for value in entry.values():
            if isinstance(value, (list, dict)):
                yield from _toc_files(value)
    elif isinstance(entry, list):
        for item in entry:
            yield from _toc_files(item)


def test_toc_lists_only_files_that_exist():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    assert toc["format"] == "jb-book"
    files = list(_toc_files(toc))
    assert files and files[0] == toc["root"]
    missing = []
    for name in files:
        path = ROOT / name
        candidates = [path] if path.suffix in {".md", ".ipynb"} else [
            path.with_suffix(".md"),
            path.with_suffix(".ipynb"),
        ]
        if not any(candidate.is_file() for candidate in candidates):
            missing.append(name)
    assert not missing, f"_toc.yml names files that do not exist: {missing}"


def test_toc_pages_live_in_book_dir():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    outside = [name for name in _toc_files(toc) if not name.startswith("book/")]
    assert not outside, f"chapters belong in book/: {outside}"


def test_book_config_executes_with_cache_and_ignores_non_book_dirs():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["only_build_toc_files"] is True
    assert config["execute"]["execute_notebooks"] == "cache"
    assert config["execute"]["timeout"] >= 300
    excluded = set(config["exclude_patterns"])
    for directory in [".venv", "_build", "notebooks", "tests", "benchmarks", "autograder", "chibigrad"]:
        assert directory in excluded, directory


def test_ci_run_is_executable_strict_bash_that_calls_make_test():
    script = ROOT / ".ci" / "run"
    assert os.access(script, os.X_OK), ".ci/run is not executable"
    text = script.read_text()
    assert text.startswith("#!/usr/bin/env bash") or text.startswith("#!/bin/bash")
    assert "set -euo pipefail" in text
    commands = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    assert "make test" in commands


def _makefile_targets():
    text = (ROOT / "Makefile").read_text()
    return text, dict(re.findall(r"^([A-Za-z0-9_.$()/-]+):(?!=)(.*)$", text, flags=re.M))


def test_makefile_has_test_book_and_clean_targets():
    text, targets = _makefile_targets()
    for name in ["test", "book", "clean"]:
        assert name in targets, f"no `{name}` target"
    assert "SHELL := /bin/bash" in text
    assert "jupyter-book build" in text and "-W" in text


def test_makefile_venv_stamp_depends_on_requirements_and_pyproject():
    text, targets = _makefile_targets()
    assert "$(STAMP)" in targets, "no stamp rule"
    deps = targets["$(STAMP)"].split()
    assert "requirements.txt" in deps and "pyproject.toml" in deps
    assert "$(STAMP)" in targets["test"].split()
    assert "$(STAMP)" in targets["book"].split()
    assert re.search(r"^STAMP := \$\(VENV\)/\.stamp$", text, flags=re.M)


def test_pyproject_packages_and_console_script():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["name"] == "chibigrad-course"
    assert project["project"]["requires-python"] == ">=3.11"
    assert project["project"]["scripts"]["autograder"] == "autograder.__main__:main"
    include = project["tool"]["setuptools"]["packages"]["find"]["include"]
    assert "chibigrad*" in include and "autograder*" in include
    pytest_config = project["tool"]["pytest"]["ini_options"]
    assert pytest_config["testpaths"] == ["tests"]
    assert any(marker.startswith("slow:") for marker in pytest_config["markers"])


def test_autograder_without_a_command_prints_usage_and_exits_2():
    result = subprocess.run([sys.executable, "-m", "autograder"], cwd=ROOT, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    assert "usage: autograder" in result.stderr
    help_text = subprocess.run([sys.executable, "-m", "autograder", "--help"], cwd=ROOT, capture_output=True,
                               text=True, timeout=60).stdout
    for command in ("release", "collect", "grade", "merge", "feedback", "export", "report", "integrity"):
        assert command in help_text


def test_autograder_console_script_is_registered():
    try:
        dist = metadata.distribution("chibigrad-course")
    except metadata.PackageNotFoundError:
        pytest.skip("chibigrad-course is not installed here (run through `make test`)")
    scripts = {ep.name: ep.value for ep in dist.entry_points if ep.group == "console_scripts"}
    assert scripts.get("autograder") == "autograder.__main__:main"


@pytest.mark.parametrize("directory", ["book", "notebooks", "autograder", "tests", "benchmarks"])
def test_each_top_level_directory_has_a_readme(directory):
    readme = ROOT / directory / "README.md"
    assert readme.is_file(), f"{directory}/README.md is missing"
    assert readme.read_text().strip()


def test_gitignore_keeps_builds_and_environments_out():
    ignored = set((ROOT / ".gitignore").read_text().split())
    for pattern in [".venv/", "_build/", "__pycache__/", "*.egg-info/", ".pytest_cache/", ".hypothesis/",
                    ".jupyter_cache/", "notebooks/release/"]:
        assert pattern in ignored, pattern
