"""The term's bookkeeping that nbgrader's gradebook has no place for, in ``grading/term.json``.

- ``policy``: the late-penalty rule (``autograder late-policy``);
- ``extensions``, ``excused``, ``adjustments``: per student and assignment (``extend``, ``excuse``,
  ``adjust``), each with its reason;
- ``submissions``: when each placed submission was handed in and how collect knows (Canvas's
  ``LATE`` tag, the zip's timestamps, ``--timestamp``), written by ``collect``;
- ``lms``: the Canvas ids of each student (``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``),
  from a Canvas roster, so ``export --canvas`` matches the rows Canvas expects.

``export`` applies all of it: the score Canvas gets is the autograder's, overridden by adjustments,
less the late penalty; excused is ``EX``. Grading never reads it, so regrading changes none of it.
"""
import datetime
import json
import math
import os
from dataclasses import dataclass

EMPTY = {"policy": {"percent_per_day": 0, "zero_after_days": None}, "extensions": {}, "excused": {},
         "adjustments": {}, "submissions": {}, "lms": {}}


def path(course):
    return course.grading / "term.json"


def load(course):
    """The term's state (a fresh one if nothing was stored yet)."""
    p = path(course)
    state = json.loads(json.dumps(EMPTY))
    if p.is_file():
        state.update(json.loads(p.read_text()))
    return state


def save(course, state):
    p = path(course)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, p)


def key(student, assignment):
    return f"{student}/{assignment}"


def check_known(course, student, assignment):
    """Refuse a student or assignment the gradebook does not know (a typo must not create one)."""
    from nbgrader.api import Gradebook
    with Gradebook(course.db_url, course.course_id) as gb:
        assignments = sorted(a.name for a in gb.assignments)
        students = sorted(s.id for s in gb.students)
    if assignment not in assignments:
        raise SystemExit(f"unknown assignment {assignment!r}; released: {', '.join(assignments) or 'none'}")
    if student not in students:
        raise SystemExit(f"unknown student {student!r}: not in the gradebook (collect with --roster adds students)")


def parse_days(text):
    try:
        days = float(text)
    except ValueError:
        raise SystemExit(f"{text!r}: expected a number of days, e.g. 2 or 0.5") from None
    if days < 0:
        raise SystemExit(f"{text}: a number of days cannot be negative")
    return days


@dataclass
class Lateness:
    """How late one submission counts, after its extension, and the penalty the policy gives it."""
    seconds: float  # 0 when on time
    source: str  # how collect knew the time
    penalty_fraction: float  # of the score: 0 (none) to 1 (all)

    @property
    def days(self):
        return math.ceil(self.seconds / 86400) if self.seconds > 0 else 0


def lateness(state, student, assignment, due):
    """The submission's lateness against ``due`` (aware datetime or None) plus its extension."""
    sub = state["submissions"].get(key(student, assignment))
    if not sub or due is None:
        return Lateness(0, sub["source"] if sub else "", 0.0)
    due = due + datetime.timedelta(days=state["extensions"].get(key(student, assignment), {}).get("days", 0))
    when = datetime.datetime.fromisoformat(sub["submitted_at"])
    if sub.get("on_time_by_lms"):
        seconds = 0.0
    else:
        seconds = max(0.0, (when - due).total_seconds())
        if sub.get("late_by_lms") and seconds == 0 and not state["extensions"].get(key(student, assignment)):
            seconds = 1.0  # Canvas says late, the file times cannot say by how much: at least one started day
    return Lateness(seconds, sub["source"], penalty_fraction(state["policy"], seconds))


def penalty_fraction(policy, seconds):
    """Each started day late costs ``percent_per_day`` percent; after ``zero_after_days``, everything."""
    if seconds <= 0:
        return 0.0
    days = math.ceil(seconds / 86400)
    cutoff = policy.get("zero_after_days")
    if cutoff is not None and seconds > cutoff * 86400:
        return 1.0
    return min(1.0, days * policy.get("percent_per_day", 0) / 100)


def describe_policy(policy):
    parts = []
    if policy.get("percent_per_day"):
        parts.append(f"{policy['percent_per_day']:g}% of the score per started day late")
    if policy.get("zero_after_days") is not None:
        parts.append(f"0 points when more than {policy['zero_after_days']:g} day(s) late")
    return "; ".join(parts) or "no late penalty"
