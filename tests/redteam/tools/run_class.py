"""Grade red-team corpus files of one assignment as a class, sandboxed, and measure.

    python tests/redteam/tools/run_class.py ASSIGNMENT [FILE ...]   (default: every corpus file of it)

Each corpus file becomes one student's notebook (the student edition with that one cell replaced),
collected into the scratch course build/rtcourse, graded with `autograder grade --workers 2` under
a canary CANVAS_API_TOKEN, then `feedback` and `export`. Writes build/rtresults/<assignment>.json:
per file the points on the attacked exercise, points elsewhere, and leaks found (canary anywhere
under the course or in the commands' output; RTLEAK blocks in feedback that carry the canary, hidden
test source or check bytecode). Never runs a submission outside the grader.
"""
import base64, csv, html, json, os, re, shutil, subprocess, sys, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE)); sys.path.insert(0, str(HERE.parent))
from make_nb import build  # noqa: E402
from corpus import entries  # noqa: E402

COURSE = Path(os.environ.get("RT_COURSE", REPO / "build" / "rtcourse"))
CANARY = "canary-RT-7f3a9c"
PY = str(REPO / ".venv" / "bin" / "python")


def student_id(e):
    return re.sub(r"[^A-Za-z0-9-]", "-", f"{e.kind[0]}-{e.exercise}-{e.name}")[:60]


def ag(*args, log):
    env = dict(os.environ, CANVAS_API_TOKEN=CANARY)
    p = subprocess.run([PY, "-m", "autograder", "--course", str(COURSE), *args], cwd=REPO, env=env,
                       capture_output=True, text=True)
    log.write(f"$ autograder {' '.join(args)}  rc={p.returncode}\n{p.stdout}\n{p.stderr}\n")
    return p


def canary_forms():
    forms = {CANARY, CANARY[::-1], " ".join(CANARY)}
    for pad in ("", "x", "xx"):
        b = base64.b64encode((pad + CANARY).encode()).decode()
        forms.add(b[4:-4] if len(b) > 12 else b)
    return forms


def decoded(block):
    """The texts an RTLEAK block may hold: as is, reversed, base64-decoded."""
    out = [block, block[::-1]]
    for tok in re.findall(r"[A-Za-z0-9+/=]{16,}", block):
        try:
            out.append(base64.b64decode(tok + "=" * (-len(tok) % 4)).decode("utf-8", "replace"))
        except Exception:
            pass
    return out


HIDDEN_MARKS = ("BEGIN HIDDEN", "from autograder.checks import", "import autograder.checks")
POLICY_ENV = "AUTOGRADER_SANDBOX"  # autograder.grading.sandbox.POLICY_ENV: the variable that holds its protected paths


def main():
    a = sys.argv[1]
    files = [Path(p).resolve() for p in sys.argv[2:]]
    chosen = [e for e in entries() if e.assignment == a and (not files or e.path in files)]
    visible = REPO / "build" / "rtresults" / f"{a}-visible.json"
    if not files and visible.exists():  # a wrong answer a visible test catches loses the points: no need to grade it
        caught = {r["file"] for r in json.loads(visible.read_text()) if r["caught_visible"]}
        chosen = [e for e in chosen if str(e.path.relative_to(REPO)) not in caught]
    subs = REPO / "build" / "rtsubs" / a
    shutil.rmtree(subs, ignore_errors=True)
    for e in chosen:
        build(subs / student_id(e) / a, [e.path])
    out = REPO / "build" / "rtresults"; out.mkdir(parents=True, exist_ok=True)
    tag = a if not files else a + "-extra"
    log = open(out / f"{tag}.log", "w")
    t0 = time.time()
    ag("collect", str(subs), "--assignment", a, log=log)
    g = ag("grade", a, "--workers", "2", "--force", *sum((["--student", student_id(e)] for e in chosen), []), log=log)
    hostile = sum((["--student", student_id(e)] for e in chosen if e.kind == "hostile"), [])
    if hostile:  # without --student, feedback would write every student's
        ag("feedback", a, *hostile, log=log)
    if os.environ.get("RT_EXPORT"):  # slow (the whole course): run once at the end, see points_from_records
        ag("export", "--output", str(out / f"{tag}-grades.csv"), log=log)
        ag("integrity", "--output", str(out / f"{tag}-integrity.csv"), log=log)
    elapsed = time.time() - t0
    log.close()
    analyze(a, chosen, elapsed, g.returncode, tag)


PLANTED = ("/tmp/rt-planted", "/tmp/rt-judge-pwned", "/tmp/rt-judge-pwned-repr", "~/rt-planted",
           str(COURSE / "rt-fork-was-here"), str(COURSE / "rt-daemon-was-here"), str(COURSE / "rt-planted"))
NOTE_PATTERNS = (r"RT-DAMAGE [^\n<]*", r"RT-SIGNALLABLE[^\n<]*", r"children started: \d+", r"blocks in the kernel: \d+",
                 r"found reference helper[^\n<]*")


def points_from_records(a, tag):
    """{student: {"<a>:<exercise>": points}}: from the export if there is one, else from the grading records
    (a tests cell that finished 'ok' earns the exercise's points; maxima from any export's (max) row)."""
    out = REPO / "build" / "rtresults"
    for name in (f"{tag}-grades.csv", "all-grades.csv"):
        if (out / name).exists():
            rows = {r["student_id"]: r for r in csv.DictReader(open(out / name))}
            if any(k.startswith(a + ":") for r in rows.values() for k in r):
                return rows
    top = {}
    for f in out.glob("*grades.csv"):
        for r in csv.DictReader(open(f)):
            if r["student_id"] == "(max)":
                top.update({k: float(v) for k, v in r.items() if ":" in k and v})
    rows = {}
    for f in (COURSE / "grading" / "records" / a).glob("*.json"):
        rec = json.loads(f.read_text())
        cells = rec.get("cells") or {}
        if isinstance(cells, str):
            import ast
            cells = ast.literal_eval(cells)
        failed = str(rec.get("verification") or "")
        rows[rec["student"]] = {k: (v if cells.get(k.split(":", 1)[1] + "-tests", {}).get("status") == "ok"
                                    and k.split(":", 1)[1] + "-tests" not in failed else 0.0)
                                for k, v in top.items() if k.startswith(a + ":")} if rec.get("status") == "graded" else {}
        if rows[rec["student"]] and abs(sum(rows[rec["student"]].values()) - float(rec.get("auto_score") or 0)) > 1e-9:
            rows[rec["student"]]["mismatch"] = rec.get("auto_score")  # the final export decides
    return rows


def hidden_lines(a):
    """Lines a student must never see of ``a``: its source notebook's hidden-test regions and its check
    modules' code (long lines that appear nowhere in what students get)."""
    sys.path.insert(0, str(REPO))
    import nbformat
    from autograder import feedback
    visible, hidden = [], set()
    for cell in nbformat.read(REPO / "notebooks" / "source" / a / f"{a}.ipynb", as_version=4).cells:
        shown, secret = feedback.hidden_regions(cell.source)
        visible.append(shown)
        hidden.update(line.strip() for line in secret)
    visible = "\n".join(visible)  # a check's line may be part of a longer visible one
    for path in (REPO / "autograder" / "checks" / f"a{a}.py", REPO / "autograder" / "grading" / "exercises" / f"a{a}.py"):
        if path.exists():
            hidden.update(line.strip() for line in path.read_text().splitlines())
    return {line for line in hidden if len(line) >= 25 and line not in visible
            and not line.startswith(("#", '"""', "import ", "from "))}


CHECK_MODULES = ("autograder.checks", "autograder.grading.exercises", "autograder.grading.judge")


def findings(course, a, sid, forms=None, hidden=None):
    """What one student's graded files show: ``canary_files`` (the canary in any file the grade wrote for
    them: autograded notebook, feedback, grading record), ``leaks`` (in the feedback: the canary in an RTLEAK
    block, hidden-test source, the checks' bytecode, the sandbox's policy, a student's <script>), ``printed``
    (what the blocks printed, by kind: hidden inputs among them where the checks run in the kernel) and ``notes``
    (damage reports the submission printed). ``hidden``: the lines of :func:`hidden_lines` (else the hidden
    region's first line and imports of the checks stand for hidden source)."""
    course, forms = Path(course), forms or canary_forms()
    canary_files, leaks, printed, notes = [], [], [], []
    own = "".join(f.read_text() for f in (course / "submitted" / sid / a).glob("*.ipynb"))
    hidden = hidden and {line for line in hidden if json.dumps(line)[1:-1] not in own}  # not the student's own code
    files = [f for root in (course / "autograded" / sid / a, course / "feedback" / sid / a) if root.exists()
             for f in root.rglob("*") if f.is_file()]
    record = course / "grading" / "records" / a / f"{sid}.json"
    files += [record] if record.exists() else []
    for f in files:
        text = f.read_bytes().decode("utf-8", "replace")
        if any(x in text for x in forms):
            canary_files.append(str(f.relative_to(course)))
        if f.suffix == ".ipynb":
            for pat in NOTE_PATTERNS:
                notes += re.findall(pat, text)
        if "feedback" in f.parts:
            if re.search(r"<script[^>]*>\s*/\*RTXSS|<[a-zA-Z][^<>]*onerror=\"/\*RTXSS", text):  # a tag, not escaped
                leaks.append("script-in-feedback")
            page = [html.unescape(re.sub(r"<[^>]+>", "", text))]
            for block in re.findall(r"RTLEAK&lt;&lt;(.*?)&gt;&gt;|RTLEAK<<(.*?)>>", text, re.S):
                block = html.unescape(block[0] or block[1])
                page += decoded(block)
                btag = block.split(" ", 1)[0]
                if btag == "DIS" and not block.split(" ", 2)[1:2] == [] and \
                        not block.split(" ", 2)[1].startswith(CHECK_MODULES):
                    btag = "GRADER"  # the autograder package's own code, not the checks
                if btag == "DIS" and len(block) > 80:
                    leaks.append("check-code")
                if btag in ("DIS", "GRADER", "STEP", "INPUTS", "ARGS", "SRCREV", "SRCB64", "FILE", "PROC") and len(block) > 80:
                    printed.append(f"printed-{btag}")
            for d in page[1:]:
                if any(x in d for x in forms):
                    leaks.append("canary")
            for d in page:
                if any(line in d for line in hidden) if hidden is not None else any(m in d for m in HIDDEN_MARKS):
                    leaks.append("hidden-source")
                if POLICY_ENV in d:
                    leaks.append("sandbox-policy")
    return dict(canary_files=sorted(set(canary_files)), leaks=sorted(set(leaks)),
                printed=[f"{k}x{printed.count(k)}" for k in sorted(set(printed))], notes=sorted(set(n.strip() for n in notes)))


def analyze(a, chosen, elapsed=None, grade_rc=None, tag=None):
    tag = tag or a
    out = REPO / "build" / "rtresults"
    rows = points_from_records(a, tag)
    forms = canary_forms()
    logtext = (out / f"{tag}.log").read_text()
    integrity = ""
    for name in (f"{tag}-integrity.csv", "all-integrity.csv"):
        if (out / name).exists():
            integrity += (out / name).read_text()
    results = []
    for e in chosen:
        sid = student_id(e)
        row = rows.get(sid, {})
        pts = {k.split(":", 1)[1]: v for k, v in row.items() if k.startswith(a + ":")}
        mine = pts.get(e.exercise)
        others = sum(float(v or 0) for k, v in pts.items() if k != e.exercise)
        found = findings(COURSE, a, sid, forms)
        found["leaks"] = found["leaks"] + found.pop("printed")
        results.append(dict(file=str(e.path.relative_to(REPO)), kind=e.kind, exercise=e.exercise, student=sid,
                            points=mine, max_points=None, other_points=others, graded=bool(row), **found,
                            in_integrity=(sid in integrity) if integrity else None))
    planted = [p for p in PLANTED if Path(p).expanduser().exists()]
    summary = dict(assignment=a, course=str(COURSE), seconds=None if elapsed is None else round(elapsed, 1), grade_rc=grade_rc,
                   canary_in_command_output=any(x in logtext for x in forms), planted_files=planted, results=results)
    (out / f"{tag}.json").write_text(json.dumps(summary, indent=1))
    for r in results:
        print(f"{r['kind']:7s} {r['exercise']:22s} {r['student'][:45]:45s} pts={r['points']} other={r['other_points']} "
              f"canary={len(r['canary_files'])} leaks={','.join(r['leaks'])} notes={r['notes']} integrity={r['in_integrity']}")
    print("seconds", summary["seconds"], "grade rc", grade_rc, "canary in output", summary["canary_in_command_output"],
          "planted", planted)


def main_analyze(tag):
    """Analyse again what an earlier run left (the students graded are those in the results file)."""
    a = tag.replace("-extra", "")
    old = json.loads((REPO / "build" / "rtresults" / f"{tag}.json").read_text())
    done = {r["file"] for r in old["results"]}
    chosen = [e for e in entries() if str(e.path.relative_to(REPO)) in done]
    analyze(a, chosen, old.get("seconds"), old.get("grade_rc"), tag)


if __name__ == "__main__":
    if sys.argv[1] == "--analyze":
        main_analyze(sys.argv[2])
    else:
        main()
