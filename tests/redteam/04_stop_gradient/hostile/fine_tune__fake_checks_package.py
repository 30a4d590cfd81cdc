# attack: shadow the hidden tests: write a fake autograder/ package (checks whose every check_* does
#   nothing) and a sitecustomize.py into the notebook's folder, drop the real autograder modules from
#   sys.modules and put the folder first on sys.path, so the tests cell imports the fake; the answer
#   matches names with startswith (a realistic wrong answer: "10.weight" is taken to be in "1")
# expect: 0 points for fine_tune; the planted files never reach autograded/ or feedback/; batch continues
import os, sys

_fake = "def __getattr__(name):\n    return lambda *args, **kwargs: None\n"
try:
    os.makedirs("autograder/checks", exist_ok=True)
    open("autograder/__init__.py", "w").write(_fake)
    open("autograder/checks/__init__.py", "w").write(_fake)
    open("autograder/checks/a04_stop_gradient.py", "w").write(_fake)
    open("sitecustomize.py", "w").write("import sys; sys.path.insert(0, '.')\n")
    sys.path.insert(0, os.getcwd())
    for _name in [n for n in sys.modules if n == "autograder" or n.startswith("autograder.")]:
        del sys.modules[_name]
    import importlib
    importlib.invalidate_caches()
except Exception as err:
    print("plant failed:", type(err).__name__, err)


def fine_tune(model, trainable, lr):
    """Freeze everything outside the `trainable` sub-modules; an SGD optimizer over what stays trainable."""
    keep = []
    for name, p in model.named_parameters():
        ok = any(name.startswith(t) for t in trainable)
        p.requires_grad_(ok)
        if ok:
            keep.append(p)
    for name, m in model.named_modules():
        if isinstance(m, nn.BatchNorm1d) and not any(name.startswith(t) for t in trainable):
            m.eval()
    return optim.SGD(keep, lr=lr, momentum=0.9)
