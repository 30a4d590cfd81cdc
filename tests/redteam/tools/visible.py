"""Do the visible tests catch the wrong answers? (ordinary code: run here, not sandboxed)

    python tests/redteam/tools/visible.py ASSIGNMENT [...]

Packs the assignment's `wrong` corpus files into as few notebooks as possible (one file per
exercise per notebook), executes each (student edition: PYTHONPATH=build/student) with errors
allowed, and reports, per file, whether the exercise's visible tests cell raised. Writes
build/rtresults/<assignment>-visible.json.
"""
import json, os, sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE)); sys.path.insert(0, str(HERE.parent))
from make_nb import build, grade_id  # noqa: E402
from corpus import entries  # noqa: E402


def main():
    os.environ["PYTHONPATH"] = str(REPO / "build" / "student")
    for a in sys.argv[1:]:
        wrong = [e for e in entries() if e.assignment == a and e.kind == "wrong"]
        batches = []
        for e in wrong:
            for b in batches:
                if e.exercise not in {x.exercise for x in b}:
                    b.append(e)
                    break
            else:
                batches.append([e])
        results = []
        for i, batch in enumerate(batches):
            out = build(REPO / "build" / "rtvisible" / a / str(i), [e.path for e in batch])
            nb = nbformat.read(out, as_version=4)
            client = NotebookClient(nb, timeout=120, allow_errors=True, kernel_name="python3",
                                    resources={"metadata": {"path": str(out.parent)}})
            client.execute()
            cells = {grade_id(c): c for c in nb.cells if grade_id(c)}
            for e in batch:
                tests = cells[e.exercise + "-tests"]
                errors = [o for o in tests.outputs if o.output_type == "error"]
                msg = f"{errors[0].ename}: {errors[0].evalue}"[:160] if errors else ""
                results.append(dict(file=str(e.path.relative_to(REPO)), exercise=e.exercise,
                                    caught_visible=bool(errors), message=msg))
                print(f"{a} {e.exercise:24s} {e.name:30s} visible={'CAUGHT' if errors else 'missed'} {msg[:100]}")
        (REPO / "build" / "rtresults").mkdir(parents=True, exist_ok=True)
        (REPO / "build" / "rtresults" / f"{a}-visible.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
