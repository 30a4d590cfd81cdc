"""Does ``autograder similarity`` rank copied pairs above independent ones?

A synthetic class of 01_graphs whose independent students write genuinely different code: each exercise
has five variants, the reference solution and four hand-written implementations of another shape
(``similarity_corpus/<exercise>.py``: a breadth-first queue, recursion, a class, level by level, Kahn's
algorithm, a memoised recursion, ...). Student ``(a, b, c)`` takes variant ``a + b*x + c*x^2 (mod 5)`` of
exercise ``x``: the 25 lines (``c = 0``) first, so in a class of up to 25 two students share at most one
exercise's variant, and beyond that at most two. Some of them are copied: identifiers renamed, the code
reformatted (comments, blank lines, other indentation) and the exercises reordered. Six students hand in
byte-identical notebooks. Prints where the copies rank among all pairs, and whether the lowest copied pair
scores above the highest independent one. Usage:
``python benchmarks/similarity_class.py [--students 40] [--copies 5] [--seed N]``.
"""
import argparse
import collections
import io
import itertools
import keyword
import random
import re
import sys
import time
import tokenize
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import synthetic_classes  # noqa: E402
from autograder import build  # noqa: E402
from autograder.similarity import rank  # noqa: E402

ASSIGNMENT = "01_graphs"


CORPUS = Path(__file__).resolve().parent / "similarity_corpus"
VARIANTS = 5  # per exercise (a prime: the codes below are polynomials over GF(5))


def variants():
    """``{exercise: [source, ...]}``: the solution and the four hand-written variants of each exercise."""
    nb = synthetic_classes.source_notebook(build.NOTEBOOKS, ASSIGNMENT)
    solutions = {c.id: re.sub(r"\s*### (BEGIN|END) SOLUTION\n?", "\n", c.source).strip() for c in nb.cells
                 if c.metadata.get("nbgrader", {}).get("solution")}
    out = {}
    for exercise, solution in solutions.items():
        own = (CORPUS / f"{exercise}.py").read_text().split("# ---- variant\n")[1:]
        out[exercise] = [solution] + [code.strip() for code in own]
        assert len(out[exercise]) == VARIANTS, exercise
    return out


def mixes(n, rng):
    """``n`` students' variant numbers, one per exercise: two share at most one exercise's variant while
    ``n <= 25`` (distinct lines over GF(5) meet once), at most two beyond."""
    lines = [(a, b, 0) for a in range(VARIANTS) for b in range(VARIANTS)]
    curves = [(a, b, c) for a in range(VARIANTS) for b in range(VARIANTS) for c in range(1, VARIANTS)]
    rng.shuffle(lines)
    rng.shuffle(curves)
    return [tuple((a + b * x + c * x * x) % VARIANTS for x in range(VARIANTS)) for a, b, c in (lines + curves)[:n]]


def disguise(parts, rng):
    """A copy as a student hides one: names renamed, comments and blank lines added, 2-space
    indentation, the exercises in another order."""
    parts = list(parts)
    rng.shuffle(parts)
    out = []
    for code in parts:
        names = {}
        tokens = []
        for tok in tokenize.generate_tokens(io.StringIO(code + "\n").readline):
            if tok.type == tokenize.NAME and not keyword.iskeyword(tok.string) and tok.string not in dir(__builtins__):
                tok = tok._replace(string=names.setdefault(tok.string, f"x{len(names)}_{rng.randrange(1000)}"))
            tokens.append(tok)
        renamed = tokenize.untokenize(tokens)
        lines = [line.replace("    ", "  ") + ("  # my own idea" if rng.random() < 0.3 else "")
                 for line in renamed.splitlines()]
        out.append("# worked on this for hours\n\n" + "\n\n".join(lines))
    return out


def measure(students=40, copies=5, seed=0, identical=6):
    """Rank a synthetic class; returns what the benchmark prints, as numbers."""
    rng = random.Random(seed)
    options = variants()
    exercises = list(options)
    picks = {f"s{i:02d}": mix for i, mix in enumerate(mixes(students, rng))}
    parts = {name: [options[e][k] for e, k in zip(exercises, mix)] for name, mix in picks.items()}
    codes = {name: "\n\n".join(p) for name, p in parts.items()}
    copied = set()
    for i, original in enumerate(rng.sample(sorted(parts), copies)):
        codes[f"copy{i}"] = "\n\n".join(disguise(parts[original], rng))
        picks[f"copy{i}"] = picks[original]
        copied.add(frozenset((original, f"copy{i}")))
    identical = [f"same{i}" for i in range(identical)]
    for name in identical:
        codes[name] = codes["s00"] + "\n\ndef helper(t):\n    return [n for n, _ in t.grad_fn.next_functions]"
    start = time.perf_counter()
    pairs, _ = rank(codes, released='# YOUR CODE HERE\nraise NotImplementedError("Exercise")')
    seconds = time.perf_counter() - start
    same = {frozenset(p) for p in itertools.combinations(identical, 2)}
    order = [frozenset((a, b)) for _, a, b, _ in pairs]
    score = {frozenset((a, b)): s for s, a, b, _ in pairs}
    independent = {k: s for k, s in score.items() if k not in copied and k not in same and not (k & set(identical))}
    shared = collections.Counter(sum(x == y for x, y in zip(*(picks[n] for n in k))) for k in independent)
    return {"students": len(codes), "pairs": len(pairs), "seconds": seconds,
            "same_ranks": (min(order.index(k) for k in same) + 1, max(order.index(k) for k in same) + 1) if same
            else None, "same_score": min(score.get(k) for k in same) if same else None, "copy_ranks": sorted(order.index(k) + 1 for k in copied),
            "copy_scores": sorted(score[k] for k in copied), "independent": sorted(independent.values()),
            "highest_independent": max(independent, key=independent.get), "shared": dict(sorted(shared.items()))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--copies", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    r = measure(args.students, args.copies, args.seed)
    independent = r["independent"]
    print(f"{r['students']} students, {r['pairs']} pairs compared in {r['seconds']:.2f} s")
    print(f"the 15 pairs of six identical notebooks: ranks {r['same_ranks'][0]}-{r['same_ranks'][1]}, similarity "
          f"{r['same_score']:.2f}")
    print(f"the {args.copies} disguised copies: ranks {r['copy_ranks']} (after the identical ones), similarity "
          f"{r['copy_scores'][0]:.2f}-{r['copy_scores'][-1]:.2f}")
    print(f"independent pairs ({len(independent)}; sharing 0/1/2 exercises' variants: "
          f"{'/'.join(str(r['shared'].get(k, 0)) for k in range(3))}): highest similarity {independent[-1]:.2f} "
          f"({' and '.join(sorted(r['highest_independent']))}), median {independent[len(independent) // 2]:.2f}")
    above = r["copy_scores"][0] > independent[-1]
    print(f"lowest copied pair {r['copy_scores'][0]:.2f} vs highest independent pair {independent[-1]:.2f}: every "
          f"copy ranks above every independent pair: {'yes' if above else 'NO'}")
    return 0 if above else 1


if __name__ == "__main__":
    sys.exit(main())
