"""Golden tests: small PyTorch programs must print under chibigrad exactly
what they printed under real PyTorch.

Each ``tests/golden/programs/<name>.py`` is written with plain ``import torch`` (and
may import ``attempt`` and ``graph`` from ``tests/golden/golden_helpers.py``);
``scripts/record_goldens.py`` ran it once under PyTorch and stored the output
in ``tests/golden/expected/<name>.txt``. Here the programs run in a subprocess
with ``torch`` (and ``torch.nn``, ``torch.autograd``, ...) resolving to
chibigrad's modules, so this process's ``sys.modules`` stays clean and no torch
is needed. A first line ``# requires: nn.Linear, optim.SGD`` names the
chibigrad attributes a program needs; it is skipped until they exist.
"""
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"
ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = sorted((GOLDEN / "programs").glob("*.py"))

# Known differences, each to be fixed in chibigrad (strict: a fix makes the test fail until removed here).
XFAIL = {}  # program stem -> why chibigrad does not print what PyTorch prints yet


def _missing(program):
    """The ``# requires:`` attributes chibigrad does not have yet."""
    first = program.read_text().splitlines()[0]
    if not first.startswith("# requires:"):
        return []
    missing = []
    for name in first.split(":", 1)[1].split(","):
        module, _, attr = name.strip().rpartition(".")
        try:
            if not hasattr(importlib.import_module(f"chibigrad.{module}"), attr):
                missing.append(name.strip())
        except ImportError:
            missing.append(name.strip())
    return missing


@pytest.fixture(scope="module")
def chibigrad_outputs():
    """Every runnable program's output under chibigrad, from one subprocess."""
    runnable = [str(p) for p in PROGRAMS if not _missing(p)]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run([sys.executable, str(GOLDEN / "runner.py"), "--chibigrad", "--json", *runnable],
                            capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_there_are_enough_programs():
    assert len(PROGRAMS) >= 25
    for program in PROGRAMS:
        assert (GOLDEN / "expected" / f"{program.stem}.txt").exists(), f"record {program.stem} first"


@pytest.mark.parametrize("program", [
    pytest.param(p, id=p.stem, marks=[pytest.mark.xfail(strict=True, reason=XFAIL[p.stem])] if p.stem in XFAIL else [])
    for p in PROGRAMS])
def test_prints_what_pytorch_prints(program, chibigrad_outputs):
    missing = _missing(program)
    if missing:
        pytest.skip(f"chibigrad lacks {', '.join(missing)}")
    expected = (GOLDEN / "expected" / f"{program.stem}.txt").read_text()
    assert chibigrad_outputs[program.stem].splitlines() == expected.splitlines()
