"""``similarity ASSIGNMENT``: the pairs of submissions whose own code is most alike, for a person to read.

Each submission's own code is its solution cells and any code cell it added; the released notebook's
code in those cells (the stubs) is boilerplate, left out. ``copydetect`` (MOSS's winnowing) tokenises
the code with Pygments, replaces every name by one letter (so renaming changes nothing), drops
comments and layout, and fingerprints the k-grams that remain. A pair's similarity is the mean of the
two shares: of A's fingerprinted code found in B, and of B's found in A. Reordered functions keep their
k-grams, so they are found too. The pairs above ``threshold`` go into ``reports/similarity.html``,
side by side with the shared code highlighted; every pair's score into ``reports/similarity.csv``.
A high score is a reason to look, not a verdict.
"""
import csv
import io
import itertools

import nbformat

NOISE, GUARANTEE = 25, 30  # copydetect's defaults: k-grams of 25 tokens, any shared run of 30 found


def own_code(nb):
    """The code a student wrote: solution cells and cells without nbgrader metadata, in order."""
    return "\n\n".join(c.source for c in nb.cells if c.cell_type == "code"
                       and (c.metadata.get("nbgrader", {}).get("solution") or not c.metadata.get("nbgrader")))


def _fingerprint(name, code, boilerplate=()):
    from copydetect.detector import CodeFingerprint
    return CodeFingerprint(f"{name}.py", NOISE, GUARANTEE - NOISE + 1, boilerplate=list(boilerplate),
                           fp=io.StringIO(code), language="python")


def rank(codes, released=""):
    """``{name: code}`` -> ``(pairs, empty)``: pairs ``(score, a, b, slices)`` most similar first, and
    the names with no code of their own beyond the release."""
    from copydetect.detector import compare_files
    boilerplate = _fingerprint("released", released).hashes if released.strip() else ()
    prints, empty = {}, []
    for name, code in sorted(codes.items()):
        fp = _fingerprint(name, code, boilerplate)
        if fp.token_coverage == 0:
            empty.append(name)
        else:
            prints[name] = fp
    pairs = []
    for a, b in itertools.combinations(prints, 2):
        _, (share_a, share_b), slices = compare_files(prints[a], prints[b])
        identical = codes[a].split() == codes[b].split()
        pairs.append((float(share_a + share_b) / 2, float(min(share_a, share_b)), not identical, a, b, slices))
    # of equal scores, identical pairs first (copydetect's hashes vary with the process's hash seed)
    pairs.sort(key=lambda p: (-p[0], -p[1], p[2], p[3], p[4]))
    return [(score, a, b, slices) for score, _, _, a, b, slices in pairs], empty


def similarity(course, assignment, threshold=0.5):
    """Write ``reports/similarity.html`` and ``.csv`` for one assignment; returns ``(html path, pairs, empty)``."""
    released_dir = course.release / assignment
    if not released_dir.is_dir():
        raise SystemExit(f"{assignment} is not released ({released_dir} does not exist)")
    notebooks = sorted(p.name for p in released_dir.glob("*.ipynb"))
    released = "\n\n".join(own_code(nbformat.read(released_dir / n, as_version=4)) for n in notebooks)
    codes = {}
    for folder in sorted(course.submitted.glob(f"*/{assignment}")):
        parts = []
        for name in notebooks:
            try:
                parts.append(own_code(nbformat.read(folder / name, as_version=4)))
            except (OSError, ValueError, KeyError, AttributeError):
                continue  # missing or not a notebook: nothing to compare (grading reports it)
        codes[folder.parent.name] = "\n\n".join(parts)
    pairs, empty = rank(codes, released)
    course.reports.mkdir(parents=True, exist_ok=True)
    with open(course.reports / "similarity.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student_a", "student_b", "similarity"])
        writer.writerows([a, b, f"{score:.3f}"] for score, a, b, _ in pairs)
    output = course.reports / "similarity.html"
    output.write_text(_page(assignment, [p for p in pairs if p[0] >= threshold], codes, threshold, empty))
    return output, pairs, empty


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Similarity: {{ assignment }}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 90em; color: #222; }
.pair { display: flex; gap: 1em; } .pair pre { flex: 1; overflow-x: auto; background: #f6f6f6; padding: 0.5em;
font-size: 0.8em; } mark { background: #ffd27f; }
</style></head><body>
<h1>Similarity: {{ assignment }}</h1>
<p>{{ pairs|length }} pair(s) at or above {{ "%.0f"|format(threshold * 100) }}% of one student's own code
(solution cells and added cells, the released stubs left out; names, comments and layout ignored).
Highlighted: code found in both. A reason to look, not a verdict. Every pair: <code>similarity.csv</code>.</p>
{% if empty %}<p>No code of their own: {{ empty|join(", ") }}.</p>{% endif %}
{% for score, a, b, left, right in pairs %}
<h2>{{ a }} and {{ b }}: {{ "%.0f"|format(score * 100) }}%</h2>
<div class="pair"><pre>{{ left }}</pre><pre>{{ right }}</pre></div>
{% endfor %}
</body></html>
"""


def _page(assignment, pairs, codes, threshold, empty):
    import jinja2
    from copydetect.utils import highlight_overlap
    from markupsafe import Markup
    shown = []
    for score, a, b, slices in pairs:
        sides = [Markup(highlight_overlap(codes[name], s, "<mark>", "</mark>", escape_html=True)[0])
                 if s.size else codes[name] for name, s in ((a, slices[0]), (b, slices[1]))]
        shown.append((score, a, b, *sides))
    return jinja2.Template(PAGE, autoescape=True).render(assignment=assignment, pairs=shown, threshold=threshold,
                                                         empty=empty)
