"""``collect SOURCE``: submissions from a folder or an LMS zip into ``submitted/<student>/<assignment>/``.

Recognised layouts (mixed freely):

- Canvas "Download submissions" zip: ``lastfirst[_LATE]_<userid>_<submissionid>_<file>``; a
  resubmission's file name gets ``-1``, ``-2``, ... before ``.ipynb``;
- Moodle "Download all submissions" zip: ``<Full Name>_<participantid>_assignsubmission_file_/<file>``;
- a plain folder (or zip) ``<student>/<assignment>/<file>.ipynb`` or ``<student>/<file>.ipynb``.

The roster (``--roster``: nbgrader's student CSV ``id,first_name,last_name,email,lms_user_id``, or
Canvas's gradebook export ``Student,ID,SIS User ID,SIS Login ID,Section,...``) maps LMS ids and
names to student ids; its students are added to the gradebook. Without one, the
gradebook's students (an earlier roster) are the roster; with none there either, ids are made from
the names. Which assignment a notebook belongs to comes from ``--assignment``
or from its file name (``02_backward-1.ipynb`` is ``02_backward``). A notebook with another
name is renamed when the student sent exactly one for that assignment. Of several submissions
of one notebook the latest is kept. Every file that is not placed is reported with the reason;
nothing in SOURCE is changed. A file named for another assignment than ``--assignment`` stops the
collect (``--force`` places it anyway). A submission already in ``submitted/`` that is replaced is
moved to ``grading/collect/undo/<run>/``, with what ``undo-collect`` needs to put the course back
as it was (the gradebook, grading records, autograded files, the term's state).

Lateness: Canvas's ``LATE`` tag decides whether a Canvas submission is late; the zip's timestamps
(or the files' times, or ``--timestamp``) give the time, and decide alone only where no LMS said.
"""
import csv
import datetime
import io
import json
import os
import re
import shutil
import unicodedata
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from . import term

CANVAS = re.compile(r"^(?P<name>[^_]+?)(?:_(?P<late>LATE))?_(?P<uid>\d+)_(?P<sid>\d+)_(?P<file>.+)$")
MOODLE = re.compile(r"^(?P<name>.+?)_(?P<pid>\d+)_assign(?:submission|feedback)_\w+?_?$")
COPY_SUFFIX = re.compile(r"(?:-(\d+)| \((\d+)\)|_\d{8,})$")  # Canvas -1, browser " (1)", timestamps


@dataclass
class Entry:
    """One file of the source, with what collect found out about it."""
    where: str  # its path in the source, for the report
    data: bytes
    mtime: datetime.datetime
    notes: list = field(default_factory=list)
    student: str = None
    assignment: str = None
    notebook: str = None
    copy: int = 0  # Canvas resubmission number (-1, -2, ...)
    canvas_late: bool = None  # Canvas's LATE tag (None: not a Canvas file name)
    canvas_prefix: str = None  # "lastfirst[_LATE]_<userid>_<submissionid>_": Canvas's re-upload matches on it
    names_other: str = None  # the other assignment its file name names, under --assignment


def _decode(raw):
    """A file name from bytes: UTF-8, else Latin-1 (said in the report)."""
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError:
        return raw.decode("latin-1"), "its name is not valid UTF-8 (read as Latin-1)"


def read_source(source):
    """Every file of a folder or zip: ``[Entry]``; zips inside are not opened."""
    source = Path(source)
    entries = []
    if source.is_file() and zipfile.is_zipfile(source):
        with zipfile.ZipFile(source) as zf:
            for info in zf.infolist():
                if info.is_dir():
                    continue
                if info.flag_bits & 0x800:
                    name, note = info.filename, None
                else:  # no UTF-8 flag: zipfile read CP437; most tools wrote UTF-8 or the system's code page
                    name, note = _decode(info.filename.encode("cp437"))
                entry = Entry(name, zf.read(info), datetime.datetime(*info.date_time, tzinfo=datetime.timezone.utc))
                entry.notes += [note] if note else []
                entries.append(entry)
    elif source.is_dir():
        base = os.fsencode(source)
        for dirpath, _, filenames in os.walk(base):
            for raw in filenames:
                path = os.path.join(dirpath, raw)
                name, note = _decode(os.path.relpath(path, base))
                stat = os.stat(path)
                with open(path, "rb") as f:
                    entry = Entry(name, f.read(), datetime.datetime.fromtimestamp(stat.st_mtime, datetime.timezone.utc))
                entry.notes += [note] if note else []
                entries.append(entry)
    else:
        raise SystemExit(f"{source}: not a folder or a zip file")
    return entries


def slug(text):
    """An id nbgrader and file systems take: ASCII letters, digits, ``_`` and ``-``."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-").lower() or "unknown"


def _fold(text):
    return re.sub(r"[^a-z0-9]", "", unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower())


NBGRADER_COLUMNS = ("id", "first_name", "last_name", "email", "lms_user_id")
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")


class Roster:
    """Student ids by LMS user id, by Canvas ``lastfirst``, by full name, by email and by id.

    Two formats: nbgrader's student CSV (``id,first_name,last_name,email,lms_user_id``) and Canvas's
    gradebook export (``Student,ID,SIS User ID,SIS Login ID,Section,...``, whose ``Points Possible``
    row and rows without a Canvas ``ID`` are skipped). A Canvas student's id is their SIS Login ID
    (else SIS User ID, else ``canvas-<ID>``), made safe for file names."""

    def __init__(self, path=None):
        self.students, self.index, self.lms = [], {}, {}
        if path:
            with open(path, newline="", encoding="utf-8-sig") as f:
                reader = csv.DictReader(f)
                columns = [c.strip() for c in reader.fieldnames or []]
                rows = [{k.strip(): (v or "").strip() for k, v in row.items() if k} for row in reader]
            if "id" in columns:
                for row in rows:
                    if row.get("id"):
                        self._add(row, {"ID": row.get("lms_user_id", ""),
                                        "Student": f"{row.get('last_name', '')}, {row.get('first_name', '')}"})
            elif {"Student", "ID"} <= set(columns):
                for row in rows:
                    if row["ID"].isdigit():
                        self._add_canvas(row)
            else:
                raise SystemExit(f"{path}: roster columns {', '.join(columns) or '(none)'} not recognised; a roster is "
                                 f"nbgrader's student CSV ({','.join(NBGRADER_COLUMNS)}; id required) or Canvas's "
                                 f"gradebook export (Grades > Export: {','.join(CANVAS_COLUMNS)},...)")

    @classmethod
    def of_course(cls, course):
        """The students the gradebook has (from an earlier roster), so a collect without
        ``--roster`` finds the same ids instead of making new ones from names."""
        from nbgrader.api import Gradebook
        roster = cls()
        with Gradebook(course.db_url, course.course_id) as gb:
            for s in gb.students:
                roster._add({"id": s.id, "first_name": s.first_name or "", "last_name": s.last_name or "",
                             "email": s.email or "", "lms_user_id": s.lms_user_id or ""})
        return roster

    def _add_canvas(self, row):
        if row["Student"] == "Student, Test":  # Canvas's student view, not a student
            return
        last, _, first = row["Student"].partition(", ")
        if not first:  # "First Last" where Canvas was told to show names that way
            first, _, last = row["Student"].rpartition(" ")
        sid = slug(row.get("SIS Login ID") or row.get("SIS User ID") or f"canvas-{row['ID']}")
        self._add({"id": sid, "first_name": first, "last_name": last, "email": "", "lms_user_id": row["ID"]},
                  {c: row.get(c, "") for c in CANVAS_COLUMNS})

    def _add(self, row, lms=None):
        """One student; ``lms``: their Canvas ids, kept for ``export --canvas``."""
        self.students.append(row)
        if lms:
            self.lms[row["id"]] = lms
        first, last = row.get("first_name", ""), row.get("last_name", "")
        for key in (row.get("lms_user_id"), _fold(last + first), _fold(first + last),
                    _fold(row.get("email", "").split("@")[0]), _fold(row["id"]), row["id"]):
            if key:
                self.index.setdefault(key, row["id"])

    def find(self, *keys):
        for key in keys:
            if key and key in self.index:
                return self.index[key]
        return None


def _assignment_of(stem, assignments):
    """``02_backward-1`` -> (``02_backward``, 1); None if the name says nothing."""
    copy = 0
    match = COPY_SUFFIX.search(stem)
    if match:
        copy = int(match.group(1) or match.group(2) or 0)
        stem = stem[:match.start()]
    for name in assignments:
        if stem == name or _fold(stem) == _fold(name):
            return name, copy
    return None, copy


def classify(entry, roster, notebooks, forced_assignment, course_assignments=()):
    """Fill in the entry's student, assignment and notebook, or a note saying why not.
    ``course_assignments``: every assignment of the course, released or not, to tell a file
    that names another assignment than ``forced_assignment``."""
    parts = entry.where.replace("\\", "/").split("/")
    filename, lms_name, lms_id, student_hint = parts[-1], None, None, None
    moodle = next((MOODLE.match(p) for p in parts[:-1] if MOODLE.match(p)), None)
    canvas = CANVAS.match(filename)
    if moodle:
        lms_name, lms_id = moodle["name"], moodle["pid"]
    elif canvas:
        lms_name, lms_id, filename = canvas["name"], canvas["uid"], canvas["file"]
        entry.canvas_late = bool(canvas["late"])
        entry.canvas_prefix = parts[-1][:-len(canvas["file"])]
    elif len(parts) >= 2:
        student_hint = parts[0]
    if not filename.lower().endswith(".ipynb"):
        entry.notes.append("not a notebook (.ipynb)")
        return False
    stem = filename[:-len(".ipynb")]
    assignment, entry.copy = _assignment_of(stem, notebooks)
    if forced_assignment:
        named, _ = _assignment_of(stem, sorted(set(course_assignments) | set(notebooks)))
        if named and named != forced_assignment:
            entry.names_other = named
    folder_assignment = next((p for p in parts[1:-1] if p in notebooks), None)
    assignment = forced_assignment or assignment or folder_assignment
    if assignment is None:
        entry.notes.append("cannot tell which assignment it is for (name it after the assignment, or use "
                           "--assignment)")
        return False
    entry.assignment = assignment
    entry.notebook = stem if stem in notebooks[assignment] else None
    if entry.notebook is None:
        base, _ = _assignment_of(stem, {n: None for n in notebooks[assignment]})
        entry.notebook = base
    if roster.students:
        entry.student = roster.find(lms_id, _fold(lms_name or ""), student_hint, _fold(student_hint or ""))
        if entry.student is None:
            who = lms_name or student_hint or "?"
            entry.notes.append(f"student {who!r}{f' (LMS id {lms_id})' if lms_id else ''} is not on the roster")
            return False
    else:
        entry.student = slug(student_hint or lms_name or lms_id or "")
        if entry.student == "unknown":
            entry.notes.append("cannot tell whose submission it is (no folder or LMS name)")
            return False
    return True


def collect(course, source, roster_path=None, assignment=None, timestamp=None, dry_run=False, force=False):
    """Place every submission of ``source``; returns the report rows (also written to
    ``grading/collect/collect-<time>.csv``). ``dry_run``: change nothing, only say what would
    change. A file whose name names another assignment than ``assignment`` stops the whole collect
    unless ``force``. Every collect can be undone (:func:`undo`)."""
    notebooks = course.assignments()
    if assignment and assignment not in notebooks:
        raise SystemExit(f"unknown assignment {assignment!r}; released: {', '.join(notebooks) or 'none'}")
    roster = Roster(roster_path) if roster_path else Roster.of_course(course)
    entries = read_source(source)
    placed, rows = {}, []
    known = course.source_assignments() if course.source.is_dir() else []  # released or not
    for entry in entries:
        if classify(entry, roster, notebooks, assignment, known):
            placed.setdefault((entry.student, entry.assignment), []).append(entry)
        else:
            rows.append(_row(entry, "not placed"))
    _refuse_other_assignment(entries, assignment, force)
    state = term.load(course)
    plan = []
    for (student, name), group in sorted(placed.items()):
        keep = _choose(group, notebooks[name], rows)
        if not keep:
            continue
        when, meta = _handed_in(course, name, keep.values(), timestamp)
        for entry in keep.values():
            if not _is_notebook_json(entry.data):
                entry.notes.append("not valid notebook JSON (placed anyway; grading scores it 0)")
        replaces = _replaces(course, student, name)
        for entry in keep.values():
            entry.notes += [n for n in (meta["note"], replaces) if n]
            rows.append(_row(entry, "would place" if dry_run else "placed"))
        plan.append((student, name, keep, when, meta))
    if dry_run:
        return rows
    if roster_path:
        _import_roster(course, roster)
        state["lms"].update(roster.lms)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    undo_dir = course.grading / "collect" / "undo" / stamp
    _journal(course, undo_dir, source, [(student, name) for student, name, *_ in plan])
    for student, name, keep, when, meta in plan:
        _write_submission(course, student, name, keep, when, undo_dir)
        state["submissions"][term.key(student, name)] = {k: v for k, v in meta.items() if k != "note"}
    term.save(course, state)
    report = course.grading / "collect" / f"collect-{stamp}.csv"
    with open(report, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["status", "file", "student", "assignment", "notebook", "notes"])
        writer.writeheader()
        writer.writerows(rows)
    (course.grading / "collect" / "latest.json").write_text(json.dumps(
        {"source": str(source), "report": str(report), "rows": rows}, indent=1) + "\n")
    return rows


def _refuse_other_assignment(entries, assignment, force):
    """``collect canvas-02_backward.zip --assignment 01_graphs`` is a mistake, not a rename."""
    wrong = [e for e in entries if e.names_other]
    if not wrong:
        return
    if not force:
        named = sorted({e.names_other for e in wrong})
        examples = ", ".join(e.where for e in wrong[:3]) + (", ..." if len(wrong) > 3 else "")
        raise SystemExit(f"{len(wrong)} file(s) are named for {', '.join(named)}, not --assignment {assignment} "
                         f"({examples}): nothing collected. Collect them with --assignment {named[0]}, or add "
                         f"--force to place them in {assignment} anyway.")
    for entry in wrong:
        entry.notes.append(f"named for {entry.names_other}; placed in {assignment} (--force)")


def _choose(group, wanted, rows):
    """One student's files for one assignment: ``{notebook: entry}``, the latest copy of each."""
    by_notebook = {}
    for entry in group:
        if entry.notebook is None and len(wanted) == 1 and len({e.where for e in group}) == len(group):
            entry.notebook = wanted[0]
            entry.notes.append(f"renamed to {wanted[0]}.ipynb")
        if entry.notebook is None:
            entry.notes.append(f"not one of the assignment's notebooks ({', '.join(wanted)})")
            rows.append(_row(entry, "not placed"))
            continue
        by_notebook.setdefault(entry.notebook, []).append(entry)
    keep = {}
    for nb, candidates in by_notebook.items():
        candidates.sort(key=lambda e: (e.mtime, e.copy))
        keep[nb] = candidates[-1]
        for older in candidates[:-1]:
            older.notes.append(f"an older copy of {nb}.ipynb; kept {candidates[-1].where}")
            rows.append(_row(older, "duplicate, not used"))
        if len(candidates) > 1:
            keep[nb].notes.append(f"the latest of {len(candidates)} copies")
    return keep


def _handed_in(course, assignment, entries, timestamp):
    """When the submission was handed in, and how we know: ``(when, meta)``.

    Canvas's ``LATE`` tag is the LMS's own verdict and wins: a Canvas file without it is on time
    whatever the zip's timestamps say (they can be the time the zip was made, canvas-lms#2219).
    The timestamps give the time (and how late) only as a fallback, and the note says so."""
    entries = list(entries)
    when = timestamp or max(e.mtime for e in entries)
    source = "--timestamp" if timestamp else "the zip's or files' timestamps"
    meta = {"submitted_at": when.isoformat(), "source": source, "note": None}
    tags = {e.canvas_late for e in entries if e.canvas_late is not None}
    prefix = next((e.canvas_prefix for e in entries if e.canvas_prefix), None)
    if prefix:
        meta["canvas_prefix"] = prefix
    due = _due(course, assignment)
    late_by_clock = due is not None and (when - due).total_seconds() > 0
    if tags and not timestamp:
        late = True in tags
        meta.update(source="Canvas's LATE tag", late_by_lms=late, on_time_by_lms=not late)
        if late:
            meta["note"] = (f"late by {_duration((when - due).total_seconds())} (Canvas's LATE tag; the time from "
                            f"the zip's timestamps)" if late_by_clock else
                            "late (Canvas's LATE tag; the zip's timestamps say on time: counted as 1 day late)")
        elif late_by_clock:
            meta["note"] = (f"on time (no LATE tag from Canvas), although the zip's timestamps say "
                            f"{_duration((when - due).total_seconds())} after the due date")
    elif late_by_clock:
        meta["note"] = f"late by {_duration((when - due).total_seconds())} (from {source})"
    return when, meta


def _due(course, assignment):
    from nbgrader.api import Gradebook
    with Gradebook(course.db_url, course.course_id) as gb:
        due = gb.find_assignment(assignment).duedate
    return due.replace(tzinfo=datetime.timezone.utc) if due is not None and due.tzinfo is None else due


def _replaces(course, student, assignment):
    """What a collect of this submission replaces, said on its line."""
    if not (course.submitted / student / assignment).exists():
        return None
    record = course.read_record(assignment, student)
    if record:
        return (f"replaces the submission graded {record['auto_score']:g}/{record['max_score']:g} "
                f"(`autograder undo-collect` restores it)")
    return "replaces the submission collected before (`autograder undo-collect` restores it)"


def _journal(course, undo_dir, source, pairs):
    """What :func:`undo` needs to put back: the term, the gradebook, and each pair's records
    and autograded files (the submitted files are moved here by :func:`_write_submission`)."""
    undo_dir.mkdir(parents=True)
    (undo_dir / "term.json").write_text(json.dumps(term.load(course)))
    if course.sqlite_path and course.sqlite_path.is_file():
        shutil.copy2(course.sqlite_path, undo_dir / "gradebook.db")
    for student, name in pairs:
        record = course.record_path(name, student)
        if record.is_file():
            (undo_dir / "records" / name).mkdir(parents=True, exist_ok=True)
            shutil.copy2(record, undo_dir / "records" / name / record.name)
        graded = course.autograded / student / name
        if graded.is_dir():
            shutil.copytree(graded, undo_dir / "autograded" / student / name, symlinks=True)
    (undo_dir / "journal.json").write_text(json.dumps({"source": str(source), "pairs": pairs}, indent=1) + "\n")


def undo(course):
    """Undo the latest collect not undone yet: the submissions it placed are moved to
    ``grading/collect/undone/``, what they replaced goes back, and so do the grading records,
    the autograded files, the term (extensions, lateness) and the gradebook (SQLite) as they were
    before it. Returns the lines to print."""
    runs = sorted((course.grading / "collect" / "undo").glob("*/journal.json"))
    if not runs:
        raise SystemExit("nothing to undo: no collect has been run since the last undo")
    undo_dir = runs[-1].parent
    journal = json.loads(runs[-1].read_text())
    if not (undo_dir / "gradebook.db").is_file() and course.sqlite_path:
        raise SystemExit(f"{undo_dir}: the gradebook was not saved by that collect; cannot undo it")
    if not course.sqlite_path:
        raise SystemExit("undo-collect restores a SQLite gradebook only (--db is not SQLite)")
    aside = course.grading / "collect" / "undone" / undo_dir.name
    lines = []
    for student, name in journal["pairs"]:
        for tree, folder in (("submitted", course.submitted), ("autograded", course.autograded)):
            current = folder / student / name
            if current.exists():
                (aside / tree / student).mkdir(parents=True, exist_ok=True)
                shutil.move(str(current), str(aside / tree / student / name))
            before = undo_dir / tree / student / name
            if before.exists():
                shutil.move(str(before), str(current))
        record, before = course.record_path(name, student), undo_dir / "records" / name / f"{student}.json"
        if record.is_file():
            (aside / "records" / name).mkdir(parents=True, exist_ok=True)
            shutil.move(str(record), str(aside / "records" / name / record.name))
        if before.is_file():
            shutil.move(str(before), str(record))
        lines.append(f"  {student}/{name}: " + ("previous submission restored" if (course.submitted / student / name)
                                                 .exists() else "removed (it had no earlier submission)"))
    shutil.copy2(undo_dir / "gradebook.db", course.sqlite_path)
    term.save(course, json.loads((undo_dir / "term.json").read_text()))
    shutil.rmtree(undo_dir)
    return [f"undid the collect of {journal['source']} ({len(journal['pairs'])} submission(s)); the gradebook is "
            f"as it was before it; what it placed is in {aside}"] + lines


def _row(entry, status):
    return {"status": status, "file": entry.where, "student": entry.student or "", "assignment": entry.assignment or "",
            "notebook": entry.notebook or "", "notes": "; ".join(entry.notes)}


def _is_notebook_json(data):
    try:
        nb = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return False
    return isinstance(nb, dict) and "cells" in nb


def _write_submission(course, student, assignment, keep, when, undo_dir):
    target = course.submitted / student / assignment
    if target.exists():
        backup = undo_dir / "submitted" / student / assignment
        backup.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(target), str(backup))
    target.mkdir(parents=True)
    for nb, entry in keep.items():
        (target / f"{nb}.ipynb").write_bytes(entry.data)
    utc = when.astimezone(datetime.timezone.utc)
    (target / "timestamp.txt").write_text(utc.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))


def _duration(seconds):
    hours = seconds / 3600
    return f"{hours / 24:.1f} days" if hours >= 48 else f"{hours:.1f} h"


def _import_roster(course, roster):
    from nbgrader.api import Gradebook
    with Gradebook(course.db_url, course.course_id) as gb:
        for row in roster.students:
            gb.update_or_create_student(row["id"], **{k: row.get(k) or None for k in (
                "first_name", "last_name", "email", "lms_user_id")})


def format_rows(rows):
    out = io.StringIO()
    counts = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
        if row["status"] != "placed" or row["notes"]:
            out.write(f"  {row['status']:<20} {row['file']}" + (f" -> {row['student']}/{row['assignment']}"
                      if row["student"] else "") + (f": {row['notes']}" if row["notes"] else "") + "\n")
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    return f"{summary}\n{out.getvalue()}"
