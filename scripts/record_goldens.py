"""Record what real PyTorch prints for each golden program.

    /work/torchenv/bin/python scripts/record_goldens.py [NAME ...]

Runs every ``tests/golden/programs/*.py`` (or the named ones) with this
Python, which must have torch, through ``tests/golden/runner.py`` and writes
the normalised output to ``tests/golden/expected/<name>.txt``.
``tests/test_golden.py`` then checks chibigrad prints the same, without torch.
"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"


def record(program):
    result = subprocess.run([sys.executable, str(GOLDEN / "runner.py"), str(program)], capture_output=True,
                            text=True, cwd=ROOT, timeout=300)
    if result.returncode != 0:
        raise SystemExit(f"{program.name}: the runner failed\n{result.stderr}")
    out = GOLDEN / "expected" / f"{program.stem}.txt"
    out.write_text(result.stdout)
    print(f"{program.stem}: {len(result.stdout.splitlines())} lines")


def main(names):
    import torch  # noqa: F401 - fail early with a clear message when torch is missing
    programs = sorted((GOLDEN / "programs").glob("*.py"))
    if names:
        programs = [p for p in programs if p.stem in names]
    for program in programs:
        record(program)


if __name__ == "__main__":
    main(sys.argv[1:])
