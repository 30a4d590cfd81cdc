"""``report``: one self-contained HTML page (figures embedded) about a class's grades.

Figures (matplotlib): the score distribution of each assignment, the pass rate of every test
(exercise), the exercises most students fail, and on-time / late / missing submissions per
assignment. Tables: a summary per assignment, a row for every submission whose grading has
something to say (bad input, timeouts, a dead kernel, truncated output, tampering, grader
errors), the files ``collect`` could not place, missing submissions, and the integrity findings.
"""
import base64
import collections
import csv
import datetime
import html
import io

from . import export, integrity, term


def _figure_html(fig, alt):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    import matplotlib.pyplot as plt
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode()
    return f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}"><figcaption>{html.escape(alt)}</figcaption></figure>'


def _stats(course):
    table = export.grade_table(course)
    students = [s["id"] for s in table["students"]]
    stats = {}
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    for name, info in table["assignments"].items():
        due_passed = info["duedate"] is not None and info["duedate"].replace(tzinfo=None) < now
        subs = {s: table["scores"][(s, name)] for s in students if (s, name) in table["scores"]}
        exercise_pass = {}
        for exercise, top in info["exercises"].items():
            got = [sub["exercises"].get(exercise, 0) for sub in subs.values()]
            got = [g for g in got if g is not None]  # not graded: left out of the pass rate
            exercise_pass[exercise] = (sum(1 for g in got if g >= top) / len(got)) if got else None
        stats[name] = {"max": info["max"], "scores": [sub["score"] for sub in subs.values()],
                       "late": sum(1 for sub in subs.values() if (sub["late_seconds"] or 0) > 0),
                       "missing": [s for s in students if s not in subs and due_passed
                                   and f"{s}/{name}" not in table["term"]["excused"]], "submitted": len(subs),
                       "pass": exercise_pass}
    return table, stats


def figures(stats):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    out = []
    names = list(stats)
    if not names:
        return out
    fig, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names), 2.8), squeeze=False)
    for ax, name in zip(axes[0], names):
        s = stats[name]
        ax.hist(s["scores"], bins=min(20, max(5, int(s["max"]) + 1)), range=(0, s["max"] or 1), color="#4477aa")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel(f"score (of {s['max']:g})", fontsize=8)
        ax.set_ylabel("students", fontsize=8)
    fig.suptitle("Score distribution per assignment", fontsize=10, y=1.04)
    out.append(_figure_html(fig, "Score distribution per assignment"))

    labels, rates = [], []
    for name in names:
        for exercise, rate in stats[name]["pass"].items():
            if rate is not None:
                labels.append(f"{name}:{exercise}")
                rates.append(100 * rate)
    if labels:
        fig, ax = plt.subplots(figsize=(7, 0.25 * len(labels) + 1))
        bars = ax.barh(range(len(labels)), rates, color="#228833")
        ax.bar_label(bars, fmt="%.0f%%", fontsize=7, padding=2)
        ax.set_yticks(range(len(labels)), labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("% of submissions with full points")
        ax.set_title("Pass rate per test", fontsize=10)
        out.append(_figure_html(fig, "Pass rate per test"))
        worst = sorted(zip(rates, labels))[:10]
        fig, ax = plt.subplots(figsize=(7, 0.3 * len(worst) + 1))
        bars = ax.barh(range(len(worst)), [100 - r for r, _ in worst], color="#cc3311")
        ax.bar_label(bars, fmt="%.0f%%", fontsize=7, padding=2)
        ax.set_yticks(range(len(worst)), [label for _, label in worst], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel("% of submissions that lost points")
        ax.set_title("The exercises most students fail", fontsize=10)
        out.append(_figure_html(fig, "The exercises most students fail"))

    fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(names)), 3))
    on_time = [stats[n]["submitted"] - stats[n]["late"] for n in names]
    late = [stats[n]["late"] for n in names]
    missing = [len(stats[n]["missing"]) for n in names]
    ax.bar(names, on_time, label="on time", color="#4477aa")
    ax.bar(names, late, bottom=on_time, label="late", color="#ee7733")
    ax.bar(names, missing, bottom=[a + b for a, b in zip(on_time, late)], label="missing", color="#bbbbbb")
    ax.set_ylabel("students")
    ax.tick_params(axis="x", labelsize=8, rotation=30)
    ax.legend(fontsize=8)
    ax.set_title("Late and missing submissions", fontsize=10)
    out.append(_figure_html(fig, "Late and missing submissions"))
    return out


def _table(header, rows):
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _collect_rows(course):
    """What the latest collect of each assignment did not simply place: an earlier run's rows are stale once
    the assignment was collected again."""
    latest = {}
    for path in sorted((course.grading / "collect").glob("collect-*.csv")):  # named by time: oldest first
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        for assignment in {r["assignment"] for r in rows if r["assignment"]} or {""}:
            latest[assignment] = [r for r in rows if r["assignment"] in (assignment, "")]
    return [r for _, rows in sorted(latest.items()) for r in rows if r["status"] != "placed" or r["notes"]]


def _failure_messages(course, assignment):
    """``{exercise: Counter(first line of the error)}`` over the autograded notebooks of one assignment."""
    import nbformat
    found = collections.defaultdict(collections.Counter)
    for path in sorted(course.autograded.glob(f"*/{assignment}/*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error" and grade_id.endswith("-tests"):
                    line = (str(output.get("evalue", "")).strip().splitlines() or [output.get("ename", "")])[0]
                    found[grade_id[:-len("-tests")]][f"{output.get('ename', '')}: {line}"[:160]] += 1
    return found


def _difficulty(course, table):
    """A row per exercise: mean points, how many earned them all, and the commonest failure with its count."""
    rows = []
    for name, info in table["assignments"].items():
        subs = [sc for (_, a), sc in table["scores"].items() if a == name]
        failures = _failure_messages(course, name)
        for exercise, top in info["exercises"].items():
            got = [g for g in (sc["exercises"].get(exercise, 0) for sc in subs) if g is not None]
            full = sum(1 for g in got if g >= top)
            common = failures[exercise].most_common(1)
            rows.append([name, exercise, f"{sum(got) / len(got):.2f} / {top:g}" if got else "-",
                         f"{full}/{len(got)}" + (f" ({100 * full / len(got):.0f}%)" if got else ""),
                         f"{common[0][0]} ({common[0][1]}x)" if common else ""])
    return ("<h2>Exercises by difficulty</h2><p>Mean points, submissions with full points, and the commonest "
            "failure (first line of the error, how many notebooks showed it).</p>"
            + _table(["assignment", "exercise", "mean", "full points", "most common failure"], rows))


def _decisions(table):
    """The instructor's decisions (``adjust``, ``extend``, ``excuse``) and the late policy, with reasons."""
    state = table["term"]
    rows = [[key, "override", f"{v['points']:g} points", v["reason"]] for key, v in sorted(state["adjustments"].items())]
    rows += [[key, "extension", f"{v['days']:g} day(s)", v["reason"]] for key, v in sorted(state["extensions"].items())]
    rows += [[key, "excused", "EX", v["reason"]] for key, v in sorted(state["excused"].items())]
    return (f"<h2>Overrides, extensions, excused</h2><p>Late policy: {html.escape(term.describe_policy(state['policy']))}.</p>"
            + (_table(["student/assignment[/exercise]", "decision", "value", "reason"], rows) if rows else "<p>None.</p>"))


def report(course, output=None):
    """Write the report; returns its path."""
    table, stats = _stats(course)
    records = course.records_all()
    output = output or course.reports / "report.html"
    course.reports.mkdir(parents=True, exist_ok=True)
    parts = [f"<h1>Grading report: {html.escape(course.course_id)}</h1>",
             f"<p>{len(table['students'])} students, {len(stats)} assignments; written "
             f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}.</p>"]
    summary = []
    for name, s in stats.items():
        scores = sorted(s["scores"])
        median = scores[len(scores) // 2] if scores else 0
        mean = sum(scores) / len(scores) if scores else 0
        summary.append([name, f"{s['max']:g}", s["submitted"], f"{mean:.1f}", f"{median:g}", s["late"], len(s["missing"])])
    parts.append("<h2>Assignments</h2>" + _table(
        ["assignment", "max", "submitted", "mean", "median", "late", "missing"], summary))
    parts.append("<h2>Figures</h2>" + "".join(figures(stats)))
    parts.append(_difficulty(course, table))
    events = []
    for (assignment, student), r in sorted(records.items()):
        if r["notes"] or r["status"] != "graded" or r.get("error"):
            what = list(r["notes"]) + ([f"grader error: {r['error'].strip().splitlines()[-1]}"] if r.get("error") else [])
            events.append([student, assignment, f"{r['auto_score']:g}/{r['max_score']:g}", r["status"], "; ".join(what)])
    parts.append("<h2>What happened while grading</h2><p>Every submission whose grading has something to say. "
                 "Scores are the autograder's, before manual grades and late penalties.</p>"
                 + (_table(["student", "assignment", "auto score", "status", "what happened"], events)
                    if events else "<p>Nothing: every submission ran normally.</p>"))
    collected = _collect_rows(course)
    parts.append("<h2>Collect: files not placed, duplicates, renames</h2>"
                 + (_table(["status", "file", "student", "assignment", "notes"],
                           [[r["status"], r["file"], r["student"], r["assignment"], r["notes"]] for r in collected])
                    if collected else "<p>Nothing to report.</p>"))
    missing = [[s, name] for name, st in stats.items() for s in st["missing"]]
    late = [[s, a, f"{sc['late_seconds'] / 3600:.1f} h", f"{sc['penalty'] or 0:g}"]
            for (s, a), sc in sorted(table["scores"].items()) if (sc["late_seconds"] or 0) > 0]
    parts.append("<h2>Late submissions</h2>" + (_table(["student", "assignment", "late by", "penalty"], late)
                                                 if late else "<p>None.</p>"))
    parts.append("<h2>Missing submissions</h2><p>Students with no submission (not excused) for an assignment "
                 "whose due date has passed.</p>" + (_table(["student", "assignment"], missing) if missing
                                                      else "<p>None.</p>"))
    parts.append(_decisions(table))
    _, findings = integrity.integrity(course)
    parts.append("<h2>Integrity</h2><p>Details in <code>reports/integrity.csv</code> "
                 "(<code>autograder integrity</code>).</p>"
                 + (_table(["student", "assignment", "category", "cell", "detail"],
                           [[f["student"], f["assignment"], f["category"], f["cell"], f["detail"]] for f in findings])
                    if findings else "<p>No findings.</p>"))
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Grading report: {html.escape(course.course_id)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; font-size: 0.85em; }}
th, td {{ border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }}
th {{ background: #f0f0f0; }}
figure {{ display: inline-block; margin: 1em; }} figcaption {{ font-size: 0.8em; color: #555; }}
</style></head><body>
{''.join(parts)}
</body></html>
"""
    output.write_text(page)
    return output
