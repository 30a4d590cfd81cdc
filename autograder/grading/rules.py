"""An exercise's rules about *how* it is answered, checked by the judge on the notebook's source as data.

The judge sees only what the student process answers, and an answer computed by the student edition's own
library code (a renamed copy of a function the engine needs, made from its ``__code__``) or by a recursion
under a raised limit is the same data as the student's own. Those rules are read from the source the student
wrote instead: it is parsed with :mod:`ast`, never run. An exercise declares them on ``@exercise``:

- ``forbids``: names of the library's implementation of the exercise (``"sum_to_size"``). Naming one, as a
  name, an attribute, an import or inside a string, scores the exercise 0; so does any means of copying a
  function (``__code__``, ``FunctionType``, ``CodeType``), which such an exercise has no use for;
- ``no_recursion``: ``sys.setrecursionlimit`` and ``threading.stack_size`` score it 0.

What this rules out, and what not: the written forms of those tricks in the code the answer depends on (what
it reaches by name, and every statement that sets an attribute), and a raised limit anywhere; a comparison with
the library in a cell of one's own is not part of the answer.
Python can reach any object without writing its name (``exec``, ``eval``, ``compile``, ``getattr`` with a
computed name, ``__dict__``, ``globals()``, ``importlib``): those cannot be judged from the source, so they
are reported (:func:`dynamic_access`) for the instructor to read in ``integrity.csv``, not scored. Recursion
itself is judged by the calls' results: Python's default limit holds in every call (``runner``).
"""
import ast
import re

COPIES_A_FUNCTION = ("__code__", "FunctionType", "CodeType")
RAISES_THE_LIMIT = ("setrecursionlimit", "stack_size")
DYNAMIC_CALLS = {"exec", "eval", "compile", "__import__", "globals", "locals", "vars"}
DYNAMIC_NAMES = {"importlib", "__dict__", "__builtins__", "__globals__", "builtins"}
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_MAGIC = re.compile(r"^\s*[%!].*$", re.MULTILINE)  # IPython's magics and shell lines: not Python


def student_cells(nb):
    """``[(grade_id, source)]`` of every code cell the student may write: solution cells and cells of their own
    (not the release's read-only cells, not the test cells, whose source nbgrader puts back)."""
    def theirs(cell):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        return cell.cell_type == "code" and not meta.get("locked") and not meta.get("grade")
    return [(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", ""), cell.source)
            for cell in nb.cells if theirs(cell)]


def _words(tree):
    """``(identifiers, strings)`` a cell names: names, attributes, imported names, argument and function names;
    and its string constants (docstrings left out: a docstring may say what not to call)."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str)}
    names, strings = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.update(part for name in (node.name, node.asname or "") for part in name.split("."))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            strings.append(node.value)
    return names, strings


def _parse(source):
    """The cell's syntax tree; None when it is not Python even without magics (the kernel fails it anyway)."""
    try:
        return ast.parse(_MAGIC.sub("", source))
    except SyntaxError:
        return None


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
    """Every name a statement mentions: what it needs (and binds) by name."""
    return {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}


def exercise_code(cells, exercise, function):
    """``[(syntax tree or None, source text when it is not Python, whether the answer depends on it)]``: the
    top-level statements of ``cells`` (:func:`student_cells`) that an exercise's rules read, all but the functions
    and classes defined in *another* exercise's answer cell (``Hypot`` may call ``sum_to_size``) that the answer
    does not reach. The answer ``function`` depends on a statement that binds a name it reaches by name,
    transitively (a helper, a copy, a module it came from), on one that sets an attribute (an alias put on a
    class) and on what that reaches. The others are scratch: comparing one's answer with the library's in a cell
    of one's own is allowed. An empty list when the notebook does not define ``function``."""
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
    reached = {i for i, (node, _, _, exempt) in enumerate(statements)
               if node is None or not exempt and _writes_attribute(node)}
    wanted = {function}.union(*(_names(statements[i][0]) for i in reached if statements[i][0] is not None))
    grew = True
    while grew:
        grew = False
        for i, (node, binds, _, _) in enumerate(statements):
            if i not in reached and binds & wanted:
                reached.add(i)
                grew = True
                wanted |= _names(node)
    return [(node, text, i in reached) for i, (node, _, text, exempt) in enumerate(statements)
            if i in reached or not exempt]


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
    found = []
    for node, text, answer in exercise_code(cells, exercise, function or exercise):
        if node is None:
            names, strings = set(re.findall(r"\w+", text)), []
        else:
            names, strings = _words(ast.Module(body=[node], type_ignores=[]))
        for name, why in [*(in_answer.items() if answer else ()), *anywhere.items()]:
            if (name in names or any(name in s for s in strings)) and why not in found:
                found.append(why)
    return found


def dynamic_access(cells):
    """The ways the cells reach objects without writing their names (for integrity.csv; never scored)."""
    seen = set()
    for _, source in cells:
        tree = _parse(source)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                name = node.func.id
                if name in DYNAMIC_CALLS:
                    seen.add(f"{name}()")
                elif name in ("getattr", "setattr", "delattr") and len(node.args) > 1 \
                        and not isinstance(node.args[1], ast.Constant):
                    seen.add(f"{name}() with a computed name")
            elif isinstance(node, ast.Name) and node.id in DYNAMIC_NAMES:
                seen.add(node.id)
            elif isinstance(node, ast.Attribute) and node.attr in DYNAMIC_NAMES:
                seen.add(node.attr)
            elif isinstance(node, ast.alias) and node.name.split(".")[0] in DYNAMIC_NAMES:
                seen.add(node.name)
    return sorted(seen)
