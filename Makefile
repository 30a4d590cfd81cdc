# chibigrad course: `make test`, `make book`, `make clean`.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# The newest Python the pinned requirements support (3.13, 3.12 or 3.11) that runs here; a pyenv
# shim for a version that is not active fails `-c`, so it is skipped. `make PYTHON=...` overrides.
SUITABLE := import sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))
PYTHON ?= $(or $(shell for p in python3.13 python3.12 python3.11 python3; do \
	$$p -c '$(SUITABLE)' 2>/dev/null && { echo $$p; break; }; done),\
	$(error no Python 3.11 to 3.13 found on the PATH: install one, or run make PYTHON=/path/to/python3.X))
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.stamp
# `make test` lists its 20 slowest set-ups and tests at the end (where the suite's time goes).
# Extra pytest arguments, e.g. `make test PYTEST_ARGS="-n 2"` (pytest-xdist) or `-m "not slow"`.
PYTEST_ARGS ?=
# Extra jupyter-book arguments, e.g. `make book BOOK_ARGS=--all` to re-build every page.
BOOK_ARGS ?=

.PHONY: help venv test book bench clean release lab grade FORCE

help:
	@echo "make book   build the Jupyter Book into _build/html (open _build/html/index.html)"
	@echo "make test   run the test suite"
	@echo "make clean  remove _build (the rendered book and its execution cache)"
	@echo "make bench  run the speed and memory benchmarks (prints ratios; see benchmarks/README.md)"
	@echo "make release  write the student edition (notebooks, stubbed chibigrad) into $(STUDENT); never overwrites your edits"
	@echo "make lab    open JupyterLab on the student edition (Validate); LAB_ARGS=\"--no-browser --port 8890\""
	@echo "make grade NB=path/to/01_graphs.ipynb   grade a finished notebook with the hidden tests (self-study)"
	@echo "Both create $(VENV) from requirements.txt on first use (and when it or pyproject.toml changes)."

venv: $(STAMP)

# (Re)install the pinned environment when requirements.txt, pyproject.toml or this Makefile change.
$(STAMP): requirements.txt pyproject.toml Makefile
	@test -x $(PY) || { echo "creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); }
	@echo "installing requirements.txt into $(VENV) (first time: about a minute)"
	$(PY) -m pip install --quiet --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --quiet --quiet --disable-pip-version-check --no-build-isolation --no-deps --config-settings editable_mode=compat -e .
	@touch $@

test: $(STAMP)
	$(PY) -m pytest -q --durations=20 $(PYTEST_ARGS)

# The book executes its pages (cached in _build/.jupyter_cache); warnings are errors.
# JUPYTER_PATH makes the notebooks run on this venv's python3 kernel.
# Sphinx re-reads only changed pages, so a failed build forgets its environment
# (otherwise the next build would skip the failing page and pass); a build that
# passed touches _build/.book-built (tests/test_book_browser.py rebuilds when stale).
book: $(STAMP) _build/.chibigrad-stamp
	rm -f _build/.book-built
	JUPYTER_PATH="$(CURDIR)/$(VENV)/share/jupyter" $(VENV)/bin/jupyter-book build . --builder html -W -n --keep-going $(BOOK_ARGS) \
		|| { rm -f _build/.doctrees/environment.pickle; exit 1; }
	touch _build/.book-built

# Pages run chibigrad, but jupyter-cache keys a page on its own code only: when
# chibigrad changes, drop the cache and the environment so every page runs again.
_build/.chibigrad-stamp: $(shell find chibigrad -name '*.py')
	rm -rf _build/.jupyter_cache _build/.doctrees
	mkdir -p _build && touch $@

# Speed and memory benchmarks: scripts that print ratios (a few minutes; nothing is asserted on timings).
bench: $(STAMP)
	for script in benchmarks/bench_*.py; do echo "== $$script"; $(PY) $$script; echo; done

clean:
	rm -rf _build

# The exercises (notebooks/README.md): the student edition, and JupyterLab on it. PYTHONPATH makes
# the kernel (and Validate) import the student chibigrad, not the full one installed in $(VENV);
# JUPYTER_CONFIG_DIR gives Lab the student edition's configuration (Validate, no instructor tools).
# Releasing never deletes or overwrites a file the student changed (autograder/build.py, install_edition).
STUDENT := build/student
# Extra JupyterLab arguments, e.g. `make lab LAB_ARGS="--no-browser --port 8890"`.
LAB_ARGS ?=
# Jupyter refuses to run as root without --allow-root (containers often run as root).
LAB_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)
# What the student edition is made of: `make lab` re-releases only when one of these changed.
RELEASE_INPUTS := $(shell find chibigrad -name '*.py') $(wildcard notebooks/source/*/*.ipynb) \
	notebooks/nbgrader_config.py autograder/build.py autograder/nbgrader_plugins.py requirements.txt
RELEASED := build/.student-released

release: $(STAMP)
	$(PY) -m autograder.build build --check
	$(PY) -m autograder.build release $(STUDENT)
	@mkdir -p $(dir $(RELEASED)) && touch $(RELEASED)

$(RELEASED): $(STAMP) $(RELEASE_INPUTS) $(if $(wildcard $(STUDENT)/.release.json),,FORCE)
	$(PY) -m autograder.build build --check
	$(PY) -m autograder.build release $(STUDENT)
	@mkdir -p $(@D) && touch $@

FORCE:

# Self-study: grade your finished notebook with the hidden tests, e.g. `make grade NB=build/student/01_graphs/01_graphs.ipynb`.
grade: $(STAMP)
	@test -n "$(NB)" || { echo "usage: make grade NB=path/to/01_graphs.ipynb"; exit 2; }
	$(PY) -m autograder.build grade "$(NB)"

lab: $(RELEASED)
	cd $(STUDENT) && PATH="$(CURDIR)/$(VENV)/bin:$$PATH" PYTHONPATH="$(abspath $(STUDENT))" \
		JUPYTER_PATH="$(CURDIR)/$(VENV)/share/jupyter" JUPYTER_CONFIG_DIR="$(abspath $(STUDENT))/.jupyter" \
		"$(CURDIR)/$(VENV)/bin/jupyter" lab $(LAB_ROOT) $(LAB_ARGS)
