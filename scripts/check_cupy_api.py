"""Check that every numpy call in ``chibigrad/_cupy_api.py`` exists in CuPy, as CuPy resolves it.

    python scripts/check_cupy_api.py                  # against the installed CuPy (no GPU needed)
    python scripts/check_cupy_api.py --source DIR     # against a CuPy source tree (a git checkout at a tag)

A CuPy array answers ``np.f(x)`` with ``cupy.f`` (``numpy.linalg.f`` with ``cupy.linalg.f``) and a
ufunc ``np.u`` with ``cupy.u`` or ``cupyx.scipy.special.u``, looked up by name; a name that is not
there is refused with a TypeError. With ``--source`` the names are those the package's
``__init__.py`` binds (imports, assignments, definitions), read with ``ast``.
"""
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chibigrad._cupy_api import CUPY_FUNCTIONS, CUPY_UFUNCS  # noqa: E402


def names_bound_in(init_file):
    """The names a package's ``__init__.py`` binds at its top level."""
    names = set()
    for node in ast.parse(init_file.read_text()).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


def resolver_from_source(source):
    packages = {}

    def has(package, name):
        if package not in packages:
            packages[package] = names_bound_in(Path(source, *package.split("."), "__init__.py"))
        return name in packages[package]
    return has


def resolver_from_installed():
    import importlib

    def has(package, name):
        module = importlib.import_module(package)
        found = getattr(module, name, None)  # numpy's own function re-exported is refused by CuPy, as absent
        return found is not None and not (getattr(found, "__module__", None) or "").startswith("numpy")
    return has


def main(argv):
    has = resolver_from_source(argv[argv.index("--source") + 1]) if "--source" in argv else resolver_from_installed()
    missing = []
    for qualified in sorted(CUPY_FUNCTIONS):
        module, name = qualified.rsplit(".", 1)
        if not has(module.replace("numpy", "cupy", 1), name):
            missing.append(qualified)
    for name in sorted(CUPY_UFUNCS):
        if not (has("cupy", name) or has("cupyx.scipy.special", name)):
            missing.append(f"ufunc {name}")
    print(f"{len(CUPY_FUNCTIONS)} functions, {len(CUPY_UFUNCS)} ufuncs checked; missing in CuPy: {missing or 'none'}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
