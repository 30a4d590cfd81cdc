"""``feedback``: nbgrader's per-student HTML feedback, with the hidden tests kept hidden.

nbgrader's feedback shows each graded notebook as it ran: the test cells with their hidden
tests, and tracebacks that quote the hidden tests' lines and the check modules' source. Unless
``--reveal-hidden``, ``RedactHiddenTests`` replaces each hidden-tests region by one comment,
and in every traceback replaces the quoted lines that belong to a hidden region and the frames
inside the judge's check modules (``autograder/grading/exercises``) by ``[hidden test]``. The error
message itself stays: the judge writes it for the student ("walk on a chain of 25000
additions: RecursionError ..."). ``OutputsAsText`` keeps only text and raster images of every
output and escapes the student's own Markdown cells: nothing a submission produced runs as HTML or
JavaScript in the feedback.
"""
import html
import json
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
    from .grading import exercises
    return [str(Path(p).resolve()) for p in exercises.__path__]


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


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
MIN_SECRET = 12  # shorter lines ("return out") say nothing and would blank honest output


def check_lines(dirs):
    """The stripped lines of the check modules' source files in ``dirs``."""
    lines = set()
    for folder in dirs:
        for path in sorted(Path(folder).rglob("*.py")):
            lines.update(line.strip() for line in path.read_text(errors="replace").splitlines())
    return lines


class SecretLines:
    """Finds lines of hidden tests and checks inside any text a submission printed, whole or as
    part of a longer line (``repr`` of a list of lines, ``'\\n'.join(In)``). A line qualifies if
    it is at least ``MIN_SECRET`` characters and not visible to the student anyway. Each line
    is indexed by a word inside it (not its first, which an escape such as ``\\n`` may glue to
    what comes before), so a text is searched only for the lines whose word it contains."""

    def __init__(self, lines, visible=()):
        self.visible = visible = {line.strip() for line in visible} - {""}
        self.lines = {}
        for line in {line.strip() for line in lines} - visible:
            if len(line) >= MIN_SECRET:
                inner = [m.group() for m in _TOKEN.finditer(line) if m.start() > 0 and m.end() < len(line)]
                self.lines[line] = max(inner, key=len) if inner else None

    def found(self, text):
        """The secret lines that occur in ``text``."""
        words = set(_TOKEN.findall(text))
        return [line for line, word in self.lines.items() if (word is None or word in words) and line in text]

    def redact(self, text):
        """``text`` with every line that contains a secret line replaced by ``[hidden test]``."""
        found = self.found(text)
        if not found:
            return text, False
        out = []
        for line in text.split("\n"):
            code = CODE_LINE.match(line)  # a traceback's quoted line, or a whole line
            if (code["code"] if code else line).strip() in self.visible:
                pass  # a line the notebook shows (the attempt() helper's) may contain a check's line
            elif any(secret in line for secret in found):
                line = line[:len(line) - len(line.lstrip())] + HIDDEN_LINE
            out.append(line)
        return "\n".join(out), True


def redact_output(output, secrets):
    """Hidden lines out of one output (stream, execute_result, display_data, error); returns
    whether anything was removed. A rich value (HTML, LaTeX, JSON) that contains one is
    replaced whole; so is one that shows it only once unescaped (``&quot;``)."""
    hit = False
    if output.output_type == "stream":
        output.text, hit = secrets.redact(str(output.get("text", "")))
    elif output.output_type == "error":
        output.evalue, hit_value = secrets.redact(str(output.get("evalue", "")))
        lines = []
        for entry in output.get("traceback", []):
            entry, hit_entry = secrets.redact(ANSI.sub("", entry)) if secrets.found(ANSI.sub("", entry)) else (entry, False)
            hit = hit or hit_entry
            lines.append(entry)
        output.traceback = lines
        hit = hit or hit_value
    for mime, value in list(output.get("data", {}).items()):
        text = "".join(value) if isinstance(value, list) else value
        if not isinstance(text, str) or mime.startswith("image/"):
            text = json.dumps(value) if not isinstance(text, str) else ""
        if mime == "text/plain":
            output.data[mime], hit_plain = secrets.redact(text)
            hit = hit or hit_plain
        elif secrets.found(text) or secrets.found(html.unescape(text)):
            del output.data[mime]
            output.data.setdefault("text/plain", HIDDEN_LINE)
            hit = True
    return hit


SHOWN_MIMES = ("text/plain", "image/png", "image/jpeg")  # text, and pictures that cannot carry a script


class FeedbackStep(NbGraderPreprocessor):
    """nbconvert's HTML exporter configures ``display_data_priority`` for every preprocessor; nbgrader's base
    class does not declare it configurable, so traitlets warned once per step and student."""
    display_data_priority = List(Unicode()).tag(config=True)


class OutputsAsText(FeedbackStep):
    """Everything the student wrote or displayed as text: every output keeps only text and raster images
    (HTML, SVG, JavaScript, Markdown, LaTeX and widgets are dropped; nbconvert escapes the text), the
    student's own Markdown cells (not locked: autograde restores locked ones from the release) are shown
    escaped, and raw cells lose the format that would paste them into the page. So nothing a submission
    produced runs in whoever opens the feedback."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown" and not (cell.metadata.get("nbgrader") or {}).get("locked"):
            cell.source = html.escape(cell.source)
        if cell.cell_type == "raw":
            for key in ("format", "raw_mimetype"):
                cell.metadata.pop(key, None)
        for output in cell.get("outputs", []):
            data = output.get("data")
            if not data:
                continue
            dropped = sorted(mime for mime in data if mime not in SHOWN_MIMES)
            for mime in dropped:
                del data[mime]
            if dropped and "text/plain" not in data:
                data["text/plain"] = f"[{', '.join(dropped)} output: not shown in feedback]"
            output.metadata = {}
        return cell, resources


class RedactHiddenTests(FeedbackStep):
    """Hidden-test regions out of the sources, their lines out of every traceback, and the
    lines of hidden tests and checks out of every output, whatever printed them."""

    begin_test_delimeter = Unicode("BEGIN HIDDEN TESTS").tag(config=True)
    end_test_delimeter = Unicode("END HIDDEN TESTS").tag(config=True)
    hidden_dirs = List(Unicode()).tag(config=True)

    def preprocess(self, nb, resources):
        dirs = self.hidden_dirs or _hidden_dirs()
        hidden, visible = [], []
        for cell in nb.cells:
            cell.source, lines = hidden_regions(cell.source, self.begin_test_delimeter, self.end_test_delimeter)
            hidden += lines
            visible += cell.source.split("\n")
        secrets = SecretLines(hidden + sorted(check_lines(dirs)), visible)
        shown = {line.strip() for line in visible}
        hidden = [line for line in hidden if line.strip() not in shown]  # a visible helper's line stays visible
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                if output.output_type == "error":
                    output.traceback = redact_traceback(output.traceback, hidden, dirs)
                    output.evalue = "\n".join(HIDDEN_LINE if line.strip() in {h.strip() for h in hidden if h.strip()}
                                              else line for line in str(output.evalue).split("\n"))
                redact_output(output, secrets)
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
        steps = [GetGrades, OutputsAsText, CSSHTMLHeaderPreprocessor]
        if not reveal_hidden:
            steps.insert(1, RedactHiddenTests)
        cfg.GenerateFeedback.preprocessors = steps
        app = GenerateFeedback(coursedir=CourseDirectory(config=cfg), config=cfg)
        app.force = True
        app.start()
        pattern = f"{student}/{assignment or '*'}/*.html"
        written += sorted(course.feedback.glob(pattern))
    notes = late_notes(course, set(written))
    for page in set(written):
        tidy(page, page.parent.name, notes.get((page.parent.parent.name, page.parent.name)))
    return sorted(set(written))


def late_notes(course, pages):
    """``{(student, assignment): HTML}`` for each late submission among ``pages``: what ``export`` applies."""
    from .export import grade_table
    table = grade_table(course) if pages else {"scores": {}}
    return {(student, a): late_note(sub, table["term"], student, a) for (student, a), sub in table["scores"].items()
            if sub["late_seconds"] > 0 and any(p.parent.parent.name == student and p.parent.name == a for p in pages)}


def late_note(sub, state, student, assignment):
    """One paragraph: days late, the course's rule, the points before and after the penalty (``export``'s)."""
    from . import term
    extension = state["extensions"].get(term.key(student, assignment))
    after = f" (after your {extension['days']:g}-day extension)" if extension else ""
    score, penalty = sub["score"], sub["penalty"]
    points = f"{score + penalty:g} before the penalty, {score:g} after (&minus;{penalty:g})" if penalty else \
        f"{score:g} (no penalty)"
    rule = html.escape(term.describe_policy(state["policy"]))
    return (f'<p class="late-penalty"><strong>Late:</strong> submitted {sub["late_days"]} started day(s) after the '
            f"due date{after}. Late policy: {rule}. Points: {points}.</p>")


def tidy(page, assignment, late=None):
    """What nbgrader's template writes, made to serve the student: the score summary names each exercise
    (``Exercise 01.walk``, not "Test cell" for every one), says under its title how a late submission's points
    were reduced (``late``: :func:`late_note`'s paragraph), and the page loads nothing from the network (the
    template fetches MathJax from a CDN; the notebooks have no mathematics, and a page opened offline should
    not wait for one)."""
    from .build import exercise_name
    text = page.read_text()
    tidied = re.sub(r'<a href="#([\w.-]+)-tests">Test cell</a>',
                    lambda m: f'<a href="#{m[1]}-tests">Exercise {html.escape(exercise_name(assignment, m[1]))}</a>',
                    text)
    tidied = re.sub(r'<script src="https?://[^"]*mathjax[^"]*">\s*</script>', "", tidied, flags=re.I)
    if late and 'class="late-penalty"' not in tidied:
        tidied = tidied.replace("</h4>", "</h4>\n" + late, 1)  # the first heading: the notebook's score
    if tidied != text:
        page.write_text(tidied)
