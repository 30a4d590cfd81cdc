"""``collect SOURCE``: submissions from a folder or an LMS zip into ``submitted/<student>/<assignment>/``.

Recognised layouts (mixed freely):

- Canvas "Download submissions" zip: ``lastfirst[_LATE]_<userid>_<submissionid>_<file>``; a
  resubmission's file name gets ``-1``, ``-2``, ... before ``.ipynb``;
- Moodle "Download all submissions" zip: ``<Full Name>_<participantid>_assignsubmission_file_/<file>``;
- a plain folder (or zip) ``<student>/<assignment>/<file>.ipynb`` or ``<student>/<file>.ipynb``.

The roster (``--roster``, nbgrader's student CSV: ``id,first_name,last_name,email,lms_user_id``)
maps LMS ids and names to student ids; its students are added to the gradebook. Without one,
ids are made from the names. Which assignment a notebook belongs to comes from ``--assignment``
or from its file name (``02_backward-1.ipynb`` is ``02_backward``). A notebook with another
name is renamed when the student sent exactly one for that assignment. Of several submissions
of one notebook the latest is kept. Every file that is not placed is reported with the reason;
nothing in SOURCE is changed, and a submission already in ``submitted/`` that is replaced is
moved to ``grading/collect/replaced/`` first.
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


class Roster:
    """Student ids by LMS user id, by Canvas ``lastfirst``, by full name, by email and by id."""

    def __init__(self, path=None):
        self.students, self.index = [], {}
        if path:
            with open(path, newline="", encoding="utf-8-sig") as f:
                for row in csv.DictReader(f):
                    row = {k.strip(): (v or "").strip() for k, v in row.items() if k}
                    if not row.get("id"):
                        continue
                    self.students.append(row)
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


def classify(entry, roster, notebooks, forced_assignment):
    """Fill in the entry's student, assignment and notebook, or a note saying why not."""
    parts = entry.where.replace("\\", "/").split("/")
    filename, lms_name, lms_id, student_hint = parts[-1], None, None, None
    moodle = next((MOODLE.match(p) for p in parts[:-1] if MOODLE.match(p)), None)
    canvas = CANVAS.match(filename)
    if moodle:
        lms_name, lms_id = moodle["name"], moodle["pid"]
    elif canvas:
        lms_name, lms_id, filename = canvas["name"], canvas["uid"], canvas["file"]
        if canvas["late"]:
            entry.notes.append("marked LATE by Canvas")
    elif len(parts) >= 2:
        student_hint = parts[0]
    if not filename.lower().endswith(".ipynb"):
        entry.notes.append("not a notebook (.ipynb)")
        return False
    stem = filename[:-len(".ipynb")]
    assignment, entry.copy = _assignment_of(stem, notebooks)
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


def collect(course, source, roster_path=None, assignment=None, timestamp=None):
    """Place every submission of ``source``; returns the report rows (also written to
    ``grading/collect/collect-<time>.csv``)."""
    notebooks = course.assignments()
    if assignment and assignment not in notebooks:
        raise SystemExit(f"unknown assignment {assignment!r}; released: {', '.join(notebooks) or 'none'}")
    roster = Roster(roster_path)
    if roster.students:
        _import_roster(course, roster)
    entries = read_source(source)
    placed, rows = {}, []
    for entry in entries:
        if classify(entry, roster, notebooks, assignment):
            placed.setdefault((entry.student, entry.assignment), []).append(entry)
        else:
            rows.append(_row(entry, "not placed"))
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    for (student, name), group in sorted(placed.items()):
        wanted = notebooks[name]
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
        if not keep:
            continue
        when = timestamp or max(e.mtime for e in keep.values())
        for entry in keep.values():
            if not _is_notebook_json(entry.data):
                entry.notes.append("not valid notebook JSON (placed anyway; grading scores it 0)")
        _write_submission(course, student, name, keep, when, stamp)
        late = _lateness(course, name, when)
        for entry in keep.values():
            if late:
                entry.notes.append(late)
            rows.append(_row(entry, "placed"))
    report = course.grading / "collect" / f"collect-{stamp}.csv"
    report.parent.mkdir(parents=True, exist_ok=True)
    with open(report, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["status", "file", "student", "assignment", "notebook", "notes"])
        writer.writeheader()
        writer.writerows(rows)
    (course.grading / "collect" / "latest.json").write_text(json.dumps(
        {"source": str(source), "report": str(report), "rows": rows}, indent=1) + "\n")
    return rows


def _row(entry, status):
    return {"status": status, "file": entry.where, "student": entry.student or "", "assignment": entry.assignment or "",
            "notebook": entry.notebook or "", "notes": "; ".join(entry.notes)}


def _is_notebook_json(data):
    try:
        nb = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return False
    return isinstance(nb, dict) and "cells" in nb


def _write_submission(course, student, assignment, keep, when, stamp):
    target = course.submitted / student / assignment
    if target.exists():
        backup = course.grading / "collect" / "replaced" / stamp / student / assignment
        backup.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(target), str(backup))
    target.mkdir(parents=True)
    for nb, entry in keep.items():
        (target / f"{nb}.ipynb").write_bytes(entry.data)
    utc = when.astimezone(datetime.timezone.utc)
    (target / "timestamp.txt").write_text(utc.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))


def _lateness(course, assignment, when):
    from nbgrader.api import Gradebook
    with Gradebook(course.db_url, course.course_id) as gb:
        due = gb.find_assignment(assignment).duedate
    if due is None:
        return None
    due = due.replace(tzinfo=datetime.timezone.utc) if due.tzinfo is None else due
    late = (when - due).total_seconds()
    return f"late by {_duration(late)}" if late > 0 else None


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
