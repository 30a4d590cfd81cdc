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

A line ``# tolerance: R`` in a program's opening comments compares its numbers to relative R
(the text around them still exactly): for the few programs whose last printed digits depend on the
CPU, as numpy's and OpenBLAS's kernels for AVX-512 round differently from those for AVX2. The
comment above it says what was measured.
"""
import importlib
import json
import math
import os
import re
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


def _tolerance(program):
    """The relative tolerance a ``# tolerance: R`` opening comment gives a program's numbers (0: exact)."""
    for line in program.read_text().splitlines():
        if not line.startswith("#"):
            break
        if line.startswith("# tolerance:"):
            return float(line.split(":", 1)[1])
    return 0.0


NUMBER = re.compile(r"(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")  # unsigned: a sign is text, -0. too


def _close(line, expected, tolerance):
    """The same text around the numbers, and each number within ``tolerance`` (relative) of PyTorch's."""
    ours, theirs = NUMBER.findall(line), NUMBER.findall(expected)
    return NUMBER.sub("0", line) == NUMBER.sub("0", expected) and all(
        math.isclose(float(a), float(b), rel_tol=tolerance) for a, b in zip(ours, theirs))


def assert_prints(program, lines, expected):
    """``lines`` (chibigrad's output) are PyTorch's ``expected`` lines, exactly or to the program's tolerance."""
    tolerance = _tolerance(program)
    if tolerance and len(lines) == len(expected) and all(map(_close, lines, expected, [tolerance] * len(lines))):
        return
    assert lines == expected, program.stem


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
    assert_prints(program, chibigrad_outputs[program.stem].splitlines(), expected.splitlines())


def test_a_tolerance_is_rare_and_still_catches_a_wrong_number():
    tolerant = {p.stem: _tolerance(p) for p in PROGRAMS if _tolerance(p)}
    assert len(tolerant) <= 3 and max(tolerant.values()) <= 1e-4, tolerant
    assert _close("1 0.177231 tensor([0.5])", "1 0.177232 tensor([0.5])", 2e-5)
    assert not _close("1 0.177131 tensor([0.5])", "1 0.177232 tensor([0.5])", 2e-5)  # a digit earlier
    assert not _close("1 0.177232 tensor([0.5], dtype=torch.float64)", "1 0.177232 tensor([0.5])", 2e-5)
    assert not _close("1 0.177232 tensor(0.)", "1 0.177232 tensor(-0.)", 2e-5)
