"""Write tests/redteam/RESULTS.md from build/rtresults/ (what run_class.py and visible.py measured).

    python tests/redteam/tools/report.py
"""
import csv, json, sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))
from corpus import by_assignment  # noqa: E402

OUT = REPO / "build" / "rtresults"


def maxima(a):
    for path in sorted(OUT.glob("*grades.csv")):
        if path.exists():
            for row in csv.DictReader(open(path)):
                if "(max)" in row.values():
                    return {k.split(":", 1)[1]: float(v) for k, v in row.items() if k.startswith(a + ":") and v}
    return {}


def main():
    lines = ["# Red team: measured against the current grader (\"before\")", "",
             "Written by `tests/redteam/tools/report.py` from what `run_class.py` (class grading: `autograder collect`, "
             "`grade --workers 2`, `feedback`, `export`, `integrity` on a scratch copy of the course, with "
             "`CANVAS_API_TOKEN=canary-RT-7f3a9c` in the grader's environment) and `visible.py` (the student "
             "edition's visible tests) measured. One student per corpus file: the student edition with that one "
             "solution cell replaced, the other exercises left as released stubs.", "",
             "Unearned points: points a hostile cell earned on its exercise where its `# expect:` says 0. "
             "A leak: the canary in any file the grade wrote (autograded notebook, feedback HTML, grading record), "
             "or a printed block (`RTLEAK<<...>>`) in the feedback that carries the canary, hidden-test source "
             "(decoded: reversed, base64) or the checks' bytecode/constants/names. A wrong answer that a visible "
             "test catches loses its points for sure (the visible asserts are in the graded tests cell), so only "
             "those the visible tests miss were graded (plus 01_graphs, graded in full).", ""]
    totals = dict(hostile=0, unearned=0.0, unearned_tricks=0, leak_tricks=0, canary_tricks=0, wrong=0, visible=0,
                  graded=0, hidden_caught=0, wrong_full=0)
    rows_h, rows_w = [], []
    for a, group in sorted(by_assignment().items()):
        results = {}
        for name in (f"{a}.json", f"{a}-extra.json"):
            if (OUT / name).exists():
                data = json.loads((OUT / name).read_text())
                results.update({r["file"]: dict(r, planted=data.get("planted_files", []),
                                                grade_rc=data.get("grade_rc")) for r in data["results"]})
        visible = {}
        if (OUT / f"{a}-visible.json").exists():
            visible = {r["file"]: r for r in json.loads((OUT / f"{a}-visible.json").read_text())}
        top = maxima(a)
        for e in group:
            key = str(e.path.relative_to(REPO))
            r = results.get(key)
            pts = None if r is None or r["points"] in (None, "") else float(r["points"])
            expect_zero = e.expectation.startswith("0 points")
            if e.kind == "hostile":
                totals["hostile"] += 1
                unearned = pts if (pts and expect_zero) else 0.0
                totals["unearned"] += unearned or 0
                totals["unearned_tricks"] += bool(unearned)
                leaks = [] if r is None else r.get("leaks", []) + (["canary-in-" + ",".join(r["canary_files"])]
                                                          if r["canary_files"] else [])
                totals["leak_tricks"] += any(k.startswith(("canary", "hidden-source", "printed-DIS", "script"))
                                             for k in leaks) or any(k.startswith("printed-INPUTS") and int(k.split("x")[-1]) > 20 for k in leaks)
                totals["canary_tricks"] += bool(r and r["canary_files"])
                rows_h.append(f"| {a} | {e.exercise} | {e.name} | "
                              f"{'not graded' if r is None else f'{pts:g} / {top.get(e.exercise, 0):g}' if pts is not None else 'no grade'} | "
                              f"{unearned:g} | {', '.join(leaks) or '-'} | "
                              f"{'; '.join(r.get('notes', [])) if r and r.get('notes') else '-'} | "
                              f"{'?' if not r or r.get('in_integrity') is None else 'yes' if r['in_integrity'] else 'no'} |")
            else:
                totals["wrong"] += 1
                v = visible.get(key)
                caught_v = bool(v and v["caught_visible"])
                totals["visible"] += caught_v
                if r is not None:
                    totals["graded"] += 1
                    totals["hidden_caught"] += (pts == 0)
                    totals["wrong_full"] += bool(pts)
                rows_w.append(f"| {a} | {e.exercise} | {e.name} | {'caught' if caught_v else 'missed' if v else '?'} | "
                              f"{'-' if r is None else f'{pts:g} / {top.get(e.exercise, 0):g}' if pts is not None else 'no grade'} |")
    lines += ["## Totals", "",
              f"- hostile submissions: {totals['hostile']}; unearned points: **{totals['unearned']:g}** "
              f"(from {totals['unearned_tricks']} tricks); tricks that leaked: **{totals['leak_tricks']}** "
              f"(the canary in a written file: {totals['canary_tricks']})",
              f"- realistic wrong answers: {totals['wrong']}; caught by the visible tests: **{totals['visible']}** "
              f"({100 * totals['visible'] / max(1, totals['wrong']):.0f}%); graded: {totals['graded']}, of which "
              f"{totals['hidden_caught']} scored 0 and **{totals['wrong_full']} earned points**", "",
              "## Hostile submissions", "",
              "| assignment | exercise | trick | points | unearned | leaks | damage notes (from the outputs) | integrity.csv |",
              "|---|---|---|---|---|---|---|---|", *rows_h, "",
              "## Wrong answers", "",
              "| assignment | exercise | mistake | visible tests | graded points |", "|---|---|---|---|---|", *rows_w, ""]
    target = REPO / "tests" / "redteam" / "RESULTS.md"
    if target.exists() and "## Findings" in target.read_text():  # the hand-written part is kept
        findings = target.read_text().split("## Findings", 1)[1].split("\n## Totals", 1)[0]
        at = lines.index("## Totals")
        lines[at:at] = ["## Findings" + findings.rstrip("\n"), ""]
    target.write_text("\n".join(lines))
    print("\n".join(lines[:16]))


if __name__ == "__main__":
    main()
