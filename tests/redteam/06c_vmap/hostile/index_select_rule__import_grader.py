# attack: import whatever the grader has (autograder.*, its exercises and cases) and answer with any function
#   whose name mentions index_select; print what it finds
# expect: 0 points for index_select_rule; no hidden-test source or names in the feedback; batch continues
import importlib
import pkgutil
import sys

_found = []
for _name in ["autograder", "autograder.checks", "autograder.grading", "autograder.grading.exercises",
              "autograder.grading.exercises.a06c_vmap", "autograder.grading.cases", "autograder.grading.runner",
              "autograder.grading.judge"] + [n for n in list(sys.modules) if "autograder" in n or "grading" in n]:
    try:
        _mod = importlib.import_module(_name)
    except Exception as err:
        print("import", _name, type(err).__name__)
        continue
    print("RTLEAK<<NAMES", _name, sorted(vars(_mod))[::-1], ">>")
    for _attr, _fn in vars(_mod).items():
        if "index_select" in _attr.lower() and callable(_fn):
            _found.append(_fn)


def index_select_rule(x, x_bdim, dim, index, index_bdim):
    for fn in _found:
        for args in ((x, x_bdim, dim, index, index_bdim), (x, dim, index)):
            try:
                out = fn(*args)
                return out if isinstance(out, tuple) else (out, 0)
            except Exception:
                pass
    xb = x if x_bdim is None else x.movedim(x_bdim, 0)
    return xb, 0  # wrong on purpose
