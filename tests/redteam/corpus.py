"""The red team's corpus: hostile and wrong solution cells, listed from the files.

Layout: tests/redteam/<assignment>/<kind>/<exercise_id>__<short_name>.py, kind `hostile`,
`wrong` or `honest` (a right answer in a style a careless source rule would score 0). Each file is
the whole content of one exercise's solution cell (nbgrader grade_id `<exercise_id>`); its first
comment lines say what it does (`# attack:`, `# mistake:` or `# style:`) and what a correct grader
must do (`# expect:`). This module only reads the files: grading is wired
elsewhere.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
KINDS = ("hostile", "wrong", "honest")
WHAT = {"hostile": "attack", "wrong": "mistake", "honest": "style"}  # the header that says what a file does


@dataclass(frozen=True)
class Entry:
    path: Path          # the solution cell's source
    assignment: str     # e.g. "01_graphs"
    exercise: str       # the solution cell's grade_id, e.g. "walk"
    kind: str           # "hostile", "wrong" or "honest"
    name: str           # the short name after "__"
    what: str           # the `# attack:` / `# mistake:` / `# style:` text
    expectation: str    # the `# expect:` text

    @property
    def source(self) -> str:
        return self.path.read_text()


def _header(text: str, key: str) -> str:
    """The text of the leading `# key: ...` comment, continued on following `#   ` lines."""
    lines, found = [], False
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        body = line[1:].strip()
        if body.startswith(key + ":"):
            found = True
            lines.append(body[len(key) + 1:].strip())
        elif found and line.startswith("#   "):
            lines.append(body)
        elif found:
            break
    return " ".join(lines)


def entries(root: Path = ROOT) -> list[Entry]:
    """Every corpus file, sorted by assignment, kind, exercise and name."""
    found = []
    for path in sorted(root.glob("*/*/*__*.py")):
        assignment, kind = path.parent.parent.name, path.parent.name
        if kind not in KINDS:
            continue
        exercise, name = path.stem.split("__", 1)
        text = path.read_text()
        what = _header(text, WHAT[kind])
        found.append(Entry(path, assignment, exercise, kind, name, what, _header(text, "expect")))
    return found


def by_assignment(root: Path = ROOT) -> dict[str, list[Entry]]:
    """The entries grouped by assignment."""
    groups: dict[str, list[Entry]] = {}
    for entry in entries(root):
        groups.setdefault(entry.assignment, []).append(entry)
    return groups


if __name__ == "__main__":
    for a, group in by_assignment().items():
        kinds = {k: sum(e.kind == k for e in group) for k in KINDS}
        print(f"{a}: {kinds['hostile']} hostile, {kinds['wrong']} wrong, {kinds['honest']} honest")
