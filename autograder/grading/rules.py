"""An exercise's rules about *how* it is answered, checked by the judge on the notebook's source as data.

The judge sees only what the student process answers, and an answer computed by the student edition's own
library code (a renamed copy of a function the engine needs, made from its ``__code__``) or by a recursion
under a raised limit is the same data as the student's own. Those rules are read from the source the student
wrote instead: it is parsed with :mod:`ast`, never run. An exercise declares them on ``@exercise``:

- ``forbids``: names of the library's implementation of the exercise (``"sum_to_size"``). Naming one, as a
  name, an attribute, an import or a constant ``getattr`` name, scores the exercise 0 (a function's own
  variable of that name does not: it holds only what the function put there); so does any means of copying a
  function (``__code__``, ``FunctionType``, ``CodeType``), which such an exercise has no use for;
- ``no_recursion``: ``sys.setrecursionlimit`` and ``threading.stack_size`` score it 0.

What this rules out, and what not: the written forms of those tricks in the code the answer depends on (what
it reaches by name, and every statement that sets an attribute), and a raised limit anywhere; a comparison with
the library in a cell of one's own is not part of the answer.
Python can reach any object without writing its name (``exec``, ``eval``, ``compile``, ``getattr`` with a
computed name, ``operator.attrgetter``, ``__dict__``, ``globals()``, ``importlib``, a frame's or traceback's
code, ``gc``'s referents, a module the notebook wrote and imports, a magic such as ``%run``), and bind a name
without writing it (``globals()[...] = ...``), so no reading of the source can follow such code. An exercise
with rules therefore does not accept it: code that may bind a name anywhere in the student's cells but inside
the functions of the other exercises' answers (a class body, a default, a decorator runs with its cell), code
that reaches an object in what the answer depends on (:func:`broken_rules`). In an assignment's other exercises
it is only reported (:func:`dynamic_access`) for the instructor to read in ``integrity.csv``. Recursion itself
is judged by the calls' results: Python's default limit holds in every call (``runner``).
"""
import ast
import functools
import re
import sys

COPIES_A_FUNCTION = ("__code__", "FunctionType", "CodeType")
RAISES_THE_LIMIT = ("setrecursionlimit", "stack_size")
# Code that may bind a name of the notebook without writing it: it counts wherever it is.
BINDING_CALLS = {"exec", "eval", "compile", "__import__", "globals", "locals", "vars", "get_ipython"}
BINDING_NAMES = {"importlib", "import_module", "__dict__", "__builtins__", "builtins", "__main__", "runpy", "ctypes",
                 "codeop"}
# Code that reaches an object without naming it: it counts where the answer depends on it.
READING_NAMES = {"__globals__", "__getattr__", "attrgetter", "methodcaller", "__getattribute__", "getattr_static",
                 "getmembers", "get_referents", "get_referrers", "get_objects", "_getframe", "currentframe", "f_code",
                 "f_globals", "f_locals", "f_back", "tb_frame", "gi_frame", "gi_code", "cr_frame", "marshal"}
MAGICS_OF_CODE = {"time", "timeit", "prun", "capture"}  # their argument (or cell) is Python run in the notebook
HARMLESS_MAGICS = {"matplotlib", "config", "precision", "xmode", "who", "whos", "who_ls", "pwd", "env", "pinfo",
                   "html", "markdown", "latex", "svg", "javascript", "bash", "sh", "writefile"}
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_LINE_MAGIC = re.compile(r"^(\s*)((?:\w+\s*=\s*)?)(%{1,2})(\w*)(.*)$")
_SHELL = re.compile(r"^(\s*)(?:\w+\s*=\s*)?!")
_OPTIONS = re.compile(r"^(?:\s*-(?:[nrplsTD]\s*\d+|\w)\b)*")  # %timeit -n 10 -r 3 ..., %prun -q ...


def student_cells(nb):
    """``[(grade_id, source)]`` of every code cell the student may write: solution cells and cells of their own
    (not the release's read-only cells, not the test cells, whose source nbgrader puts back)."""
    def theirs(cell):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        return cell.cell_type == "code" and not meta.get("locked") and not meta.get("grade")
    return [(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", ""), cell.source)
            for cell in nb.cells if theirs(cell)]


def _words(tree):
    """``(identifiers, strings)`` a cell names: names (but a function's own variables and parameters, which
    hold only what the function put there), attributes and imported names; and the constant names
    ``getattr``, ``setattr`` and ``delattr`` are given (other strings are text: an error message may say what
    not to call)."""
    names, strings = set(), []
    for node, local in _named(tree, frozenset()):
        if isinstance(node, ast.Name) and node.id not in local:
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.update(part for name in (node.name, node.asname or "") for part in name.split("."))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) > 1 \
                and node.func.id in ("getattr", "setattr", "delattr") and isinstance(node.args[1], ast.Constant):
            strings.append(str(node.args[1].value))
    return names, strings


def _named(node, local):
    """Every node under ``node`` with the names local to the function it is in (its parameters and the names
    it assigns without declaring them global); defaults and decorators belong to the enclosing scope."""
    yield node, local
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        outer = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None),
                 *getattr(node, "decorator_list", ())]
        for child in outer:
            yield from _named(child, local)
        inner = _function_locals(node)
        body = node.body if isinstance(node.body, list) else [node.body]
        for child in body:
            yield from _named(child, inner)
        return
    for child in ast.iter_child_nodes(node):
        yield from _named(child, local)


def _function_locals(function):
    """A function's parameters and the names its own body assigns, less those it declares global or
    nonlocal (nested functions and classes have their own)."""
    args = function.args
    found = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}
    declared = set()
    todo = list(function.body) if isinstance(function.body, list) else [function.body]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        if not isinstance(node, (*_DEFINITIONS, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return frozenset(found - declared)


def _parse(source):
    """The cell's syntax tree, as IPython runs it (:func:`_python`); None when it is not Python (the kernel fails
    it anyway)."""
    try:
        return ast.parse(_python(source))
    except SyntaxError:
        return None


def _python(source):
    """The cell as Python: a magic that runs code of the cell (``%time``, ``%timeit``, ``%%capture``) becomes that
    code; a harmless magic or a shell line, ``pass``; any other magic, the call IPython makes for it
    (``get_ipython().run_line_magic('run', '')``), which :func:`_dynamic_forms` reports."""
    lines = source.split("\n")
    for i, line in enumerate(lines):
        magic = _LINE_MAGIC.match(line)
        if magic:
            indent, target, percent, name, rest = magic.groups()
            if name in MAGICS_OF_CODE and percent == "%%":  # the cell's body is the code, the line options
                lines[i] = indent + "pass"
            elif name in MAGICS_OF_CODE:
                rest = _OPTIONS.sub("", rest, count=1)
                lines[i] = indent + target + rest.strip() if rest.strip() else indent + "pass"
            elif name in HARMLESS_MAGICS:
                lines[i] = indent + "pass"
                if percent == "%%":  # the cell's body is not Python
                    return "\n".join(lines[:i + 1])
            else:
                lines[i] = f"{indent}get_ipython().run_line_magic({percent + name!r}, '')"
                if percent == "%%":
                    return "\n".join(lines[:i + 1])
        elif shell := _SHELL.match(line):
            lines[i] = shell.group(1) + "pass"
    return "\n".join(lines)


def _binds(statement):
    """The module-level names a top-level statement defines or changes: assigned, imported, defined, declared
    ``global`` inside a function, or changed through an attribute or item (``torch.f = ...``). A function's
    own variables are not module-level names: a helper's ``node`` does not bind the answer's ``node``."""
    names = set()

    def visit(node, nested):
        if isinstance(node, ast.Global):
            names.update(node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and not nested:
            names.add(node.id)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            base = node
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
            if isinstance(base, ast.Name):
                names.add(base.id)
        elif isinstance(node, _DEFINITIONS) and not nested:
            names.add(node.name)
        elif isinstance(node, ast.alias) and not nested:
            names.add((node.asname or node.name).split(".")[0])
        for child in ast.iter_child_nodes(node):
            visit(child, nested or isinstance(node, (*_DEFINITIONS, ast.Lambda)))
    visit(statement, False)
    return names


def _writes_attribute(statement):
    """Whether a statement sets an attribute (``torch.Tensor.mine = ...``, ``setattr``): a way to hand the answer
    an object under a name the answer does not bind, which reading by name would not follow."""
    return any(isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)) or
               isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr"
               for n in ast.walk(statement))


def _names(statement):
    """Every name a statement mentions but its functions' own variables: what it needs (and binds) by name."""
    return {n.id for n, local in _named(statement, frozenset()) if isinstance(n, ast.Name) and n.id not in local}


def exercise_code(cells, exercise, function):
    """``[(syntax tree or None, source text when it is not Python, whether the answer depends on it)]``: the
    top-level statements of ``cells`` (:func:`student_cells`) that an exercise's rules read; of the functions and
    classes defined in *another* exercise's answer cell (``Hypot`` may call ``sum_to_size``) that the answer does
    not reach, only what runs when they are defined (:func:`_at_definition`). The answer ``function`` depends
    on a statement that binds a name it reaches by name, transitively (a helper, a copy, a module it came from),
    on one that sets an attribute (an alias put on a class) and on what that reaches. The others are scratch:
    comparing one's answer with the library's in a cell of one's own is allowed. An empty list when the notebook
    does not define ``function``."""
    statements = []  # (syntax tree or None, names it binds, source text when it is not Python, exempt)
    for grade_id, source in cells:
        tree = _parse(source)
        other = bool(grade_id) and grade_id != exercise
        if tree is None:  # not Python: its words are read as a part of every exercise
            statements.append((None, set(), source, False))
            continue
        statements += [(node, _binds(node), None, other and isinstance(node, _DEFINITIONS)) for node in tree.body]
    if not any(function in binds for _, binds, _, _ in statements):
        return []  # no answer written: the judge's call fails on its own
    views = [_at_definition(node) if exempt else node for node, _, _, exempt in statements]
    writes = {i for i, view in enumerate(views) if view is None or _writes_attribute(view)}
    wanted = {function}.union(*(_names(views[i]) for i in writes if views[i] is not None))
    named, grew = set(), True
    while grew:
        grew = False
        for i, (node, binds, _, _) in enumerate(statements):
            if i not in named and binds & wanted:
                named.add(i)
                grew = True
                wanted |= _names(node)
    return [(node if i in named else view, text, i in named | writes)
            for i, ((node, _, text, _), view) in enumerate(zip(statements, views))]


def _at_definition(definition):
    """The part of a definition in another exercise's answer that runs when its cell runs, as a module: a
    function's decorators, defaults and annotations; a class's decorators, bases and body but its methods' own
    bodies. Its rules read that part like any other code (it may set an attribute or raise a limit)."""
    if isinstance(definition, ast.ClassDef):
        parts = [*definition.decorator_list, *definition.bases, *(k.value for k in definition.keywords)]
        statements = [_at_definition(node) if isinstance(node, _DEFINITIONS) else node for node in definition.body]
    else:
        args = definition.args
        every = (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
        parts = [*definition.decorator_list, *args.defaults, *(d for d in args.kw_defaults if d is not None),
                 *(a.annotation for a in every if a is not None and a.annotation is not None),
                 *([definition.returns] if definition.returns else [])]
        statements = []
    return ast.Module(body=[ast.Expr(part) for part in parts] + statements, type_ignores=[])


def broken_rules(cells, exercise, function=None, forbids=(), no_recursion=False):
    """What the code of ``exercise`` (:func:`exercise_code`; its answer is the function ``function``, by default
    named like the exercise) does that the exercise's rules forbid: a list of sentences, empty when none. Names
    of the library's implementation and copies of code are read in what the answer depends on; a raised
    recursion limit anywhere in the notebook."""
    in_answer = {name: f"names `{name}`, the library's own implementation of this exercise" for name in forbids}
    if forbids:
        in_answer.update({name: f"uses `{name}`: copying a function's code is not allowed in this exercise"
                          for name in COPIES_A_FUNCTION})
    anywhere = {name: f"calls `{name}`: this exercise must work under Python's default recursion limit"
                for name in RAISES_THE_LIMIT} if no_recursion else {}
    if not (in_answer or anywhere):
        return []
    found, code = [], exercise_code(cells, exercise, function or exercise)
    for node, text, answer in code:
        if node is None:
            names, strings = set(re.findall(r"\w+", text)), []
        else:
            names, strings = _words(ast.Module(body=[node], type_ignores=[]))
        for name, why in [*(in_answer.items() if answer else ()), *anywhere.items()]:
            if (name in names or any(name in s for s in strings)) and why not in found:
                found.append(why)
    unreadable = sorted({form for node, _, answer in code if node is not None
                         for form, binds in _dynamic_forms(node) if binds or answer})
    if unreadable:
        found.append(f"reaches objects without naming them ({', '.join(unreadable)}): the grader cannot read what "
                     "that code uses, so an exercise with rules does not accept it (outside the other exercises' "
                     "answers)")
    return found


def _dynamic_forms(tree):
    """``{(form, binds)}``: the ways ``tree`` reaches objects without naming them; ``binds``: the form may also bind
    a name of the notebook without writing it (``exec``, ``globals()[...] =``, a magic, a module of its own)."""
    names = BINDING_NAMES | READING_NAMES
    seen = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "run_line_magic" and node.args and isinstance(node.args[0], ast.Constant):
            seen.add((f"the magic {node.args[0].value}", True))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            seen.update((f"imports `{m}`, a module of the notebook's own", True) for m in _own_modules(node))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            name = node.func.id
            if name in BINDING_CALLS:
                seen.add((f"{name}()", True))
            elif name in ("getattr", "setattr", "delattr") and len(node.args) > 1 \
                    and not isinstance(node.args[1], ast.Constant):
                seen.add((f"{name}() with a computed name", name != "getattr"))
        elif isinstance(node, (ast.Name, ast.Attribute)) and (word := getattr(node, "id", getattr(node, "attr", ""))) \
                in names:
            seen.add((word, word in BINDING_NAMES))
        elif isinstance(node, ast.alias) and (ends := {node.name.split(".")[0], node.name.split(".")[-1]}) & names:
            seen.add((node.name, bool(ends & BINDING_NAMES)))
    return seen


def _own_modules(node):
    """The modules an import reads that are neither Python's nor installed: files the notebook may have written."""
    if isinstance(node, ast.ImportFrom):
        names = [node.module or ""] if not node.level else ["." * node.level + (node.module or "")]
    else:
        names = [alias.name for alias in node.names]
    return [name for name in names if name.split(".")[0] not in _known_modules()]


@functools.lru_cache(maxsize=1)
def _known_modules():
    """Python's own modules and the top-level modules of the installed distributions (this environment's, which
    the student process shares)."""
    from importlib.metadata import packages_distributions
    return frozenset(sys.stdlib_module_names) | frozenset(sys.builtin_module_names) | set(packages_distributions())


def dynamic_access(cells):
    """The ways the cells reach objects without writing their names (for integrity.csv; never scored)."""
    trees = [_parse(source) for _, source in cells]
    return sorted({form for tree in trees if tree is not None for form, _ in _dynamic_forms(tree)})
