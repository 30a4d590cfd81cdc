"""``release``: generate the assignments with nbgrader and write the student bundle (folder and zip)."""
import datetime
from pathlib import Path

from . import build


def generate(course, names):
    """``nbgrader generate_assignment --force`` for each of ``names``, in this process, with the
    course's configuration and gradebook."""
    from nbgrader.converters import GenerateAssignment
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config
    for name in names:
        cfg = Config()
        cfg.merge(course.config)
        cfg.CourseDirectory.root = str(course.root)
        cfg.CourseDirectory.db_url = course.db_url
        cfg.CourseDirectory.assignment_id = name
        app = GenerateAssignment(coursedir=CourseDirectory(config=cfg), config=cfg)
        app.force = True
        app.create_assignment = True
        try:
            app.start()
        except Exception as err:
            raise SystemExit(f"nbgrader generate_assignment {name} failed: {err}") from err


def parse_due(text):
    """``2030-01-15T23:59`` or ``2030-01-15 23:59 +01:00`` -> an aware datetime (UTC if no zone)."""
    when = datetime.datetime.fromisoformat(text.strip().replace(" ", "T", 1))
    return when if when.tzinfo else when.replace(tzinfo=datetime.timezone.utc)


def release(course, names=None, dest=None, due=None, make_zip=True, log=None):
    """Generate ``names`` (the command line asks for ``--all`` to release every assignment) and write the student bundle to ``dest`` (default
    ``build/student``) and ``dest.zip``. ``due``: ``{assignment: datetime}``.

    The zip holds exactly this release. ``dest`` gets it without losing anything already there
    (``build.install_edition``: new files added, unchanged ones updated, changed ones kept with the new
    version beside them); ``log(line)`` hears each change. Returns ``(dest, archive or None)``."""
    available = course.source_assignments()
    names = list(names or available)
    unknown = sorted(set(names) - set(available))
    if unknown:
        raise SystemExit(f"unknown assignment(s) {', '.join(unknown)}; the course has {', '.join(available)}")
    released = set(course.assignments()) if course.sqlite_path is None or course.sqlite_path.is_file() else set()
    not_released = sorted(set(due or {}) - set(names) - released)
    if not_released:
        raise SystemExit(f"--due {', '.join(not_released)}: not an assignment of this release"
                         f"{' or an earlier one' if released else ''}; releasing {', '.join(names)}"
                         + (f"; the course has {', '.join(available)}" if set(not_released) - set(available) else ""))
    if (course.root / "source_text").is_dir():
        stale = build.build_sources(course.root, check=True)
        if stale:
            raise SystemExit(f"out of date, run notebooks/build_sources.py: {[str(p) for p in stale]}")
    generate(course, names)
    if due:
        from nbgrader.api import Gradebook
        with Gradebook(course.db_url, course.course_id) as gb:
            for name, when in due.items():
                gb.update_or_create_assignment(name, duedate=when.astimezone(datetime.timezone.utc).replace(tzinfo=None))
    dest = Path(dest or build.ROOT / "build" / "student")
    archive = build.write_student_edition(dest, names, course.release, course.root, build.PACKAGE,
                                                 make_zip=make_zip, log=log)
    return dest, archive
