"""Does ``autograder similarity`` rank copied pairs above independent ones?

A synthetic class of 01_graphs: 40 students, each a different mix of the five exercises' variants
(the solution and the three wrong answers of ``notebooks/wrong_answers``, 4^5 mixes): independent
work that still shares whole exercises with many classmates, harder than real independent code.
Five of them are copied: identifiers renamed, the code reformatted (comments, blank lines, other
indentation) and the exercises reordered. Six students hand in byte-identical notebooks. Prints
where the copies rank among all pairs. Usage: ``python benchmarks/similarity_class.py [--seed N]``.
"""
import argparse
import io
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


def variants():
    """``{exercise: [source, ...]}``: the solution and the wrong answers of each exercise."""
    nb = synthetic_classes.source_notebook(build.NOTEBOOKS, ASSIGNMENT)
    solutions = {c.id: re.sub(r"\s*### (BEGIN|END) SOLUTION\n?", "\n", c.source).strip() for c in nb.cells
                 if c.metadata.get("nbgrader", {}).get("solution")}
    wrong = synthetic_classes.wrong_answers(ASSIGNMENT)
    return {e: [s] + [src for _, src in wrong.get(e, [])] for e, s in solutions.items()}


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    options = variants()
    exercises = list(options)
    mixes = set()
    while len(mixes) < 40:
        mixes.add(tuple(rng.randrange(len(options[e])) for e in exercises))
    students = {f"s{i:02d}": [options[e][k] for e, k in zip(exercises, mix)] for i, mix in enumerate(sorted(mixes))}
    codes = {name: "\n\n".join(parts) for name, parts in students.items()}
    copied = {}
    for i, original in enumerate(rng.sample(sorted(students), 5)):
        codes[f"copy{i}"] = "\n\n".join(disguise(students[original], rng))
        copied[frozenset((original, f"copy{i}"))] = original
    identical = [f"same{i}" for i in range(6)]
    for name in identical:
        codes[name] = codes["s00"] + "\n\ndef helper(t):\n    return [n for n, _ in t.grad_fn.next_functions]"
    start = time.perf_counter()
    pairs, _ = rank(codes, released='# YOUR CODE HERE\nraise NotImplementedError("Exercise")')
    seconds = time.perf_counter() - start
    same = {frozenset(p) for p in __import__("itertools").combinations(identical, 2)}
    order = [frozenset((a, b)) for _, a, b, _ in pairs]
    score = {frozenset((a, b)): s for s, a, b, _ in pairs}
    independent = [s for k, s in score.items() if k not in copied and k not in same and not (k & set(identical))]
    ranks = sorted(order.index(k) + 1 for k in copied)
    print(f"{len(codes)} students, {len(pairs)} pairs compared in {seconds:.2f} s")
    print(f"the 15 pairs of six identical notebooks: ranks {min(order.index(k) for k in same) + 1}-"
          f"{max(order.index(k) for k in same) + 1}, similarity {min(score[k] for k in same):.2f}")
    print(f"the 5 disguised copies: ranks {ranks} (after the identical ones), similarity "
          f"{min(score[k] for k in copied):.2f}-{max(score[k] for k in copied):.2f}")
    print(f"independent pairs ({len(independent)}): highest similarity {max(independent):.2f}, "
          f"median {sorted(independent)[len(independent) // 2]:.2f}")
    above = min(score[k] for k in copied) > max(independent)
    print(f"every copy ranks above every independent pair: {'yes' if above else 'NO'}")
    return 0 if above else 1


if __name__ == "__main__":
    sys.exit(main())
