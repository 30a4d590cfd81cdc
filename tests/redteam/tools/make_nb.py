"""Build a student-edition notebook with corpus cells substituted (no execution).

    python tests/redteam/tools/make_nb.py OUT_DIR FILE [FILE ...]

All FILEs must be of one assignment (tests/redteam/<assignment>/<kind>/<id>__<name>.py);
writes OUT_DIR/<assignment>.ipynb from build/student/<assignment>/<assignment>.ipynb.
"""
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[3]


def grade_id(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def build(out_dir: Path, files: list[Path], release: Path = REPO / "build" / "student") -> Path:
    """``release``: the folder holding the student edition's ``<assignment>/<assignment>.ipynb``."""
    assignments = {f.parent.parent.name for f in files}
    assert len(assignments) == 1, assignments
    a = assignments.pop()
    nb = nbformat.read(Path(release) / a / f"{a}.ipynb", as_version=4)
    cells = {grade_id(c): c for c in nb.cells if grade_id(c)}
    for f in files:
        ex = f.stem.split("__", 1)[0]
        assert ex in cells, (f, sorted(k for k in cells if k))
        cells[ex].source = f.read_text()
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{a}.ipynb"
    nbformat.write(nb, out)
    return out


if __name__ == "__main__":
    print(build(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]]))
