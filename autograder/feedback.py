"""``feedback``: nbgrader's per-student HTML feedback, with the hidden tests kept hidden.

nbgrader's feedback shows each graded notebook as it ran: the test cells with their hidden
tests, and tracebacks that quote the hidden tests' lines and the check modules' source. Unless
``--reveal-hidden``, ``RedactHiddenTests`` replaces each hidden-tests region by one comment,
and in every traceback replaces the quoted lines that belong to a hidden region and the frames
inside the course's check modules (``autograder/checks``) by ``[hidden test]``. The error
message itself stays: the checks write it for the student ("walk on a chain of 50000
additions: RecursionError ...").
"""
import re
from pathlib import Path

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import List, Unicode

ANSI = re.compile(r"\x1b\[[0-9;]*m")
CELL_FRAME = re.compile(r"^(Cell In\[\d+\], line \d+|Input In \[\d+\])")
FILE_FRAME = re.compile(r'^(?:File "?(?P<path>[^":]+)"?(?::\d+|, line \d+))')
CODE_LINE = re.compile(r"^(?P<prefix>\s*(?:-+>\s*)?\d+\s)(?P<code>.*)$")
HIDDEN_NOTE = "# [hidden tests: not shown]"
HIDDEN_LINE = "[hidden test]"


def hidden_regions(source, begin="BEGIN HIDDEN TESTS", end="END HIDDEN TESTS"):
    """``(source without its hidden regions, the lines of those regions)``."""
    kept, hidden, inside = [], [], False
    for line in source.split("\n"):
        if begin in line:
            inside = True
            hidden.append(line)
            kept.append(line[:len(line) - len(line.lstrip())] + HIDDEN_NOTE)
            continue
        if inside:
            hidden.append(line)
            if end in line:
                inside = False
            continue
        kept.append(line)
    return "\n".join(kept), hidden


def _hidden_dirs():
    from . import checks
    return [str(Path(p).resolve()) for p in checks.__path__]


def redact_traceback(entries, hidden_lines, hidden_dirs):
    """A traceback (IPython's list of strings) without the lines of hidden tests."""
    hidden = {line.strip() for line in hidden_lines if line.strip()}
    out = []
    for entry in entries:
        plain = ANSI.sub("", entry)
        first, _, rest = plain.partition("\n")
        match = FILE_FRAME.match(first.strip())
        if match and any(str(Path(match["path"]).resolve()).startswith(d) for d in hidden_dirs):
            out.append(f"File [hidden test]\n    {HIDDEN_LINE}\n")
            continue
        if not (CELL_FRAME.match(first.strip()) or match):
            out.append(entry)
            continue
        lines = [first]
        for line in rest.split("\n"):
            code = CODE_LINE.match(line)
            if code and code["code"].strip() in hidden:
                line = code["prefix"] + HIDDEN_LINE
            elif not code and line.strip() in hidden:
                line = line[:len(line) - len(line.lstrip())] + HIDDEN_LINE
            lines.append(line)
        out.append("\n".join(lines))
    return out


class RedactHiddenTests(NbGraderPreprocessor):
    """Hidden-test regions out of the sources, their lines out of every traceback."""

    begin_test_delimeter = Unicode("BEGIN HIDDEN TESTS").tag(config=True)
    end_test_delimeter = Unicode("END HIDDEN TESTS").tag(config=True)
    hidden_dirs = List(Unicode()).tag(config=True)

    def preprocess(self, nb, resources):
        dirs = self.hidden_dirs or _hidden_dirs()
        hidden = []
        for cell in nb.cells:
            cell.source, lines = hidden_regions(cell.source, self.begin_test_delimeter, self.end_test_delimeter)
            hidden += lines
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                if output.output_type == "error":
                    output.traceback = redact_traceback(output.traceback, hidden, dirs)
                    output.evalue = "\n".join(HIDDEN_LINE if line.strip() in {h.strip() for h in hidden if h.strip()}
                                              else line for line in str(output.evalue).split("\n"))
        return nb, resources

    def preprocess_cell(self, cell, resources, index):  # pragma: no cover - preprocess does the work
        return cell, resources


def feedback(course, assignment=None, students=None, reveal_hidden=False):
    """Write ``feedback/<student>/<assignment>/<notebook>.html`` for everything autograded;
    returns the files written."""
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.converters import GenerateFeedback
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import GetGrades
    from traitlets.config import Config

    if not course.autograded.is_dir():
        return []
    written = []
    for student in students or ["*"]:
        cfg = Config()
        cfg.merge(course.config)
        cfg.CourseDirectory.root = str(course.root)
        cfg.CourseDirectory.db_url = course.db_url
        cfg.CourseDirectory.assignment_id = assignment or "*"
        cfg.CourseDirectory.student_id = student
        steps = [GetGrades, CSSHTMLHeaderPreprocessor]
        if not reveal_hidden:
            steps.insert(1, RedactHiddenTests)
        cfg.GenerateFeedback.preprocessors = steps
        app = GenerateFeedback(coursedir=CourseDirectory(config=cfg), config=cfg)
        app.force = True
        app.start()
        pattern = f"{student}/{assignment or '*'}/*.html"
        written += sorted(course.feedback.glob(pattern))
    return sorted(set(written))
