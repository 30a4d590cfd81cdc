"""``release``: generate the assignments with nbgrader and write the student bundle (folder and zip)."""
import datetime
import shutil
from pathlib import Path

from . import course as course_build


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


def release(course, names=None, dest=None, due=None, make_zip=True):
    """Generate ``names`` (default: every assignment) and write the student bundle to ``dest``
    (default ``build/student``) and ``dest.zip``. ``due``: ``{assignment: datetime}``."""
    available = course.source_assignments()
    names = list(names or available)
    unknown = sorted(set(names) - set(available))
    if unknown:
        raise SystemExit(f"unknown assignment(s) {', '.join(unknown)}; the course has {', '.join(available)}")
    if (course.root / "source_text").is_dir():
        stale = course_build.build_sources(course.root, check=True)
        if stale:
            raise SystemExit(f"out of date, run notebooks/build_sources.py: {[str(p) for p in stale]}")
    generate(course, names)
    if due:
        from nbgrader.api import Gradebook
        with Gradebook(course.db_url, course.course_id) as gb:
            for name, when in due.items():
                gb.update_or_create_assignment(name, duedate=when.astimezone(datetime.timezone.utc).replace(tzinfo=None))
    dest = Path(dest or course_build.ROOT / "build" / "student")
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in names:
        shutil.copytree(course.release / name, dest / name)
    course_build.write_student_package(dest / "chibigrad", course_build.PACKAGE, course.root)
    (dest / "requirements.txt").write_text(course_build._student_requirements())
    (dest / "pyproject.toml").write_text(course_build.STUDENT_PYPROJECT)
    (dest / "nbgrader_config.py").write_text(course_build.STUDENT_NBGRADER_CONFIG)
    (dest / "README.md").write_text(course_build.STUDENT_README.format(
        assignments="\n".join(f"- `{a}/{a}.ipynb`" for a in names)))
    archive = None
    if make_zip:
        archive = Path(shutil.make_archive(str(dest), "zip", root_dir=dest.parent, base_dir=dest.name))
    return dest, archive
