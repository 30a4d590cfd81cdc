"""What a newcomer has to read to follow ``y = (a * b).sum(); y.backward()`` through chibigrad.

Traces the two lines with ``sys.settrace`` and counts the chibigrad functions entered (each once,
however often it runs), the files they live in, and the lines of their bodies. Budget (DESIGN.md):
at most 45 functions in 8 files and 450 lines. Prints the figure and the functions, file by file.

    python benchmarks/bench_read_path.py
"""
import inspect
import sys
from pathlib import Path

import chibigrad as torch

PACKAGE = Path(torch.__file__).parent


def entered_functions(run):
    """``{(file, first line): code object}`` of every chibigrad function ``run`` enters."""
    seen = {}

    def tracer(frame, event, arg):
        code = frame.f_code
        if event == "call" and Path(code.co_filename).is_relative_to(PACKAGE):
            seen.setdefault((code.co_filename, code.co_firstlineno), code)
        return None

    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
    return seen


def body_lines(code):
    """Lines of the function's source, its docstring and blank lines left out."""
    try:
        lines, _ = inspect.getsourcelines(code)
    except OSError:
        return 0
    text = "".join(lines)
    doc = code.co_consts[0] if code.co_consts and isinstance(code.co_consts[0], str) else None
    if doc and doc in text:  # (a triple-quoted docstring spans as many lines as it has)
        text = text.replace(doc, "", 1)
    return sum(1 for line in text.splitlines() if line.strip() and line.strip() not in ('""""""', "''''''"))


def main():
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
    (a * b).sum()  # imports and first-call caches are not what a reader follows

    def run():
        y = (a * b).sum()
        y.backward()

    functions = entered_functions(run)
    files = sorted({f for f, _ in functions})
    lines = sum(body_lines(code) for code in functions.values())
    print(f"y = (a * b).sum(); y.backward() enters {len(functions)} chibigrad functions in {len(files)} files, "
          f"{lines} lines of function bodies (budget: 45 functions, 8 files, 450 lines)")
    for f in files:
        names = sorted((line, code.co_qualname) for (ff, line), code in functions.items() if ff == f)
        print(f"  {Path(f).relative_to(PACKAGE.parent)}: " + ", ".join(name for _, name in names))


if __name__ == "__main__":
    main()
