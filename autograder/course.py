"""One course directory as the command line sees it: paths, the gradebook URL, nbgrader's config."""
import json
import os
from pathlib import Path

from . import build


class Course:
    """``notebooks/`` (or ``--course DIR``): nbgrader's folders, the gradebook, and ``grading/``,
    where the autograder keeps what nbgrader has no place for (per-submission grading records,
    shard results, logs, collect reports) and ``reports/`` for what it writes for people."""

    def __init__(self, directory=None, db_url=None):
        self.root = Path(directory or build.NOTEBOOKS).resolve()
        if not (self.root / "nbgrader_config.py").is_file():
            raise SystemExit(f"{self.root} is not a course directory (no nbgrader_config.py)")
        self.db_url = db_url or f"sqlite:///{self.root / 'gradebook.db'}"
        self._config = None
        # nbgrader runs `alembic` from this environment's bin/ when it creates a gradebook, and its
        # kernels come from this environment's share/jupyter
        os.environ.update(build.nbgrader_env())

    # nbgrader's folders
    source = property(lambda self: self.root / "source")
    release = property(lambda self: self.root / "release")
    submitted = property(lambda self: self.root / "submitted")
    autograded = property(lambda self: self.root / "autograded")
    feedback = property(lambda self: self.root / "feedback")
    # ours
    grading = property(lambda self: self.root / "grading")
    records = property(lambda self: self.root / "grading" / "records")
    shards = property(lambda self: self.root / "grading" / "shards")
    logs = property(lambda self: self.root / "grading" / "logs")
    reports = property(lambda self: self.root / "reports")

    @property
    def sqlite_path(self):
        """The gradebook file when it is SQLite, else None."""
        prefix = "sqlite:///"
        return Path(self.db_url[len(prefix):]) if self.db_url.startswith(prefix) else None

    @property
    def config(self):
        """nbgrader's configuration of this course (``nbgrader_config.py``), loaded once."""
        if self._config is None:
            from traitlets.config.loader import PyFileConfigLoader
            self._config = PyFileConfigLoader("nbgrader_config.py", path=str(self.root)).load_config()
        return self._config

    @property
    def course_id(self):
        return self.config.get("CourseDirectory", {}).get("course_id") or "default_course"

    @property
    def cell_timeout(self):
        return int(self.config.get("Execute", {}).get("timeout", 30) or 30)

    def assignments(self):
        """Assignments in the gradebook (released), with their notebooks: ``{name: [notebook names]}``."""
        from nbgrader.api import Gradebook
        with Gradebook(self.db_url, self.course_id) as gb:
            return {a.name: sorted(nb.name for nb in a.notebooks) for a in sorted(gb.assignments, key=lambda a: a.name)}

    def source_assignments(self):
        return build.assignments(self.root) if (self.root / "source_text").is_dir() else sorted(
            p.name for p in self.source.iterdir() if p.is_dir())

    def record_path(self, assignment, student):
        return self.records / assignment / f"{student}.json"

    def read_record(self, assignment, student):
        path = self.record_path(assignment, student)
        return json.loads(path.read_text()) if path.is_file() else None

    def write_record(self, record):
        path = self.record_path(record["assignment"], record["student"])
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1, default=str) + "\n")
        os.replace(tmp, path)

    def records_all(self):
        """Every grading record: ``{(assignment, student): record}``."""
        out = {}
        if self.records.is_dir():
            for path in sorted(self.records.glob("*/*.json")):
                record = json.loads(path.read_text())
                out[(record["assignment"], record["student"])] = record
        return out
