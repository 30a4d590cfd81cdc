"""``extend``, ``excuse``, ``adjust``, ``late-policy``: the instructor's decisions, kept in the term's
state (``autograder/term.py``) with their reasons, and applied by ``export`` and ``report``."""
from . import term


def extend(course, args):
    term.check_known(course, args.student, args.assignment)
    days = term.parse_days(args.days)
    state = term.load(course)
    key = term.key(args.student, args.assignment)
    if days == 0:
        state["extensions"].pop(key, None)
        message = f"{key}: no extension"
    else:
        state["extensions"][key] = {"days": days, "reason": args.reason}
        message = f"{key}: due {days:g} day(s) later than the assignment"
    term.save(course, state)
    return message


def excuse(course, args):
    term.check_known(course, args.student, args.assignment)
    state = term.load(course)
    key = term.key(args.student, args.assignment)
    if args.undo:
        state["excused"].pop(key, None)
        message = f"{key}: no longer excused"
    else:
        state["excused"][key] = {"reason": args.reason}
        message = f"{key}: excused (EX in Canvas; not missing, not counted)"
    term.save(course, state)
    return message


def adjust(course, args):
    term.check_known(course, args.student, args.assignment)
    exercises = _exercises(course, args.assignment)
    if args.exercise not in exercises:
        raise SystemExit(f"{args.assignment} has no exercise {args.exercise!r}; its exercises: {', '.join(exercises)}")
    state = term.load(course)
    key = f"{term.key(args.student, args.assignment)}/{args.exercise}"
    if args.points == "auto":
        state["adjustments"].pop(key, None)
        message = f"{key}: back to the autograder's points"
    else:
        try:
            points = float(args.points)
        except ValueError:
            raise SystemExit(f"{args.points!r}: expected a number of points or 'auto'") from None
        top = exercises[args.exercise]
        if not 0 <= points <= top:
            raise SystemExit(f"{args.points}: {args.exercise} is worth 0 to {top:g} points")
        state["adjustments"][key] = {"points": points, "reason": args.reason}
        message = f"{key}: {points:g}/{top:g} ({args.reason})"
    term.save(course, state)
    return message


def late_policy(course, args):
    state = term.load(course)
    if args.none:
        state["policy"] = {"percent_per_day": 0, "zero_after_days": None}
    if args.percent_per_day is not None:
        if not 0 <= args.percent_per_day <= 100:
            raise SystemExit("--percent-per-day: between 0 and 100")
        state["policy"]["percent_per_day"] = args.percent_per_day
    if args.zero_after_days is not None:
        state["policy"]["zero_after_days"] = term.parse_days(str(args.zero_after_days))
    term.save(course, state)
    return f"late policy: {term.describe_policy(state['policy'])}"


def _exercises(course, assignment):
    """``{exercise: max points}`` of a released assignment."""
    from nbgrader.api import Gradebook
    from .export import exercise_name
    with Gradebook(course.db_url, course.course_id) as gb:
        return {exercise_name(c.name): c.max_score for nb in gb.find_assignment(assignment).notebooks
                for c in nb.grade_cells}
