"""Hidden tests of the graded notebooks, and the helpers they share: left over from the in-kernel design.

Every assignment is judged now (``autograder/grading/exercises/``); no assignment's module is left here, and
this package goes with the kernel's copy of it (``worker.KERNEL_MODULES``). It was: one module per assignment
with one ``check_<exercise>(answer)`` per exercise. A notebook's tests cell runs its visible
asserts, then calls the check in its hidden-tests region::

    ### BEGIN HIDDEN TESTS
    from autograder.checks import a03_graph_lifetime
    a03_graph_lifetime.check_hvp(hvp)
    ### END HIDDEN TESTS

Rules for checks:

- They run in the grading kernel: the instructor's environment, with the full chibigrad and
  this repository installed. Students never get this package, and the released notebooks do
  not mention it (a test checks both), so visible tests must not use it.
- A failing check raises ``AssertionError`` whose message says what is wrong and on which
  case, in the student's terms. Anything on stderr scores the cell 0, so checks never warn;
  ``call`` turns a student's warning into a clear failure.
- A check never depends on another exercise's answer: each exercise is graded on its own.
- An exercise that writes a ``Function`` is held to the engine's contract with ``contract``
  (``raw_backward``, ``expect_freed``, ``expect_version_checked``), not with a copy of it.
- Oracles come from the engine itself (``engine.topological_order``, ``autograd.grad``) or from
  numpy, never from the code a solution would be: feedback shows tracebacks.
- Importing this package is cheap (no nbgrader): it runs once per graded notebook.
"""
import contextlib
import functools
import sys
import warnings

import numpy as np

import chibigrad as torch
from chibigrad.autograd import engine
from chibigrad.autograd.node import AccumulateGrad

DEEP = 50_000  # nodes in a deep graph: far past Python's recursion limit
RECURSION_LIMIT = 1000  # Python's default; deep-graph checks run under it (call() holds its own copy)
# the checks' own references, taken when this package is imported (in the clean re-run: before any student
# code), so a submission that replaces sys.setrecursionlimit cannot keep its own limit in force
_setrecursionlimit, _getrecursionlimit, _getframe = sys.setrecursionlimit, sys.getrecursionlimit, sys._getframe


def expect(condition, message):
    """``assert`` that survives ``python -O`` and reads like the rest of a check."""
    if not condition:
        raise AssertionError(message)


def call(what, fn, *args, **kwargs):
    """Run a student's ``fn`` under Python's default recursion limit; an
    exception, a RecursionError or a warning becomes an AssertionError that
    names the case (``what``) and says what went wrong.

    The limit is a literal here, not the module's ``RECURSION_LIMIT``: a value a submission can
    rebind (``checks.RECURSION_LIMIT = 200000`` let a recursive walk pass the deep cases)."""
    old = _getrecursionlimit()
    _setrecursionlimit(max(1000, _stack_depth() + 100))
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = fn(*args, **kwargs)
    except RecursionError:
        raise AssertionError(f"{what}: RecursionError. Graphs built by loops are far deeper than Python's "
                             "recursion limit (1000); walk them with an explicit stack (a list) "
                             "instead of recursive calls.") from None
    except AssertionError:
        raise
    except Exception as err:
        raise AssertionError(f"{what} raised {type(err).__name__}: {err}") from err
    finally:
        _setrecursionlimit(old)
    if caught:
        w = caught[0]
        raise AssertionError(f"{what} emitted a warning ({w.category.__name__}: {w.message}); a warning goes to "
                             "stderr and a graded cell that writes to stderr scores 0.")
    return result


def _stack_depth():
    frame, depth = _getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


@contextlib.contextmanager
def forbidden(functions, message):
    """Make ``functions`` raise ``AssertionError(message)`` while the block runs.

    Swaps their code objects, so it also catches a student who imported the
    function under another name. For exercises that re-implement what the
    engine already ships (walking the graph, ordering it, summing to a shape).
    """
    namespace = {}
    exec(f"def blocked(*args, **kwargs):\n    raise AssertionError({message!r})", namespace)
    saved = [(f, f.__code__) for f in functions]
    for f, _ in saved:
        f.__code__ = namespace["blocked"].__code__
    try:
        yield
    finally:
        for f, code in saved:
            f.__code__ = code


# ---- graphs -----------------------------------------------------------------------------------------------------

def leaf(value=1.0, shape=(), dtype=torch.float64, rng=None):
    """A float64 leaf that requires grad: constant ``value``, or uniform in [0.5, 1.5] from ``rng``."""
    data = np.full(shape, value) if rng is None else rng.uniform(0.5, 1.5, shape)
    return torch.tensor(data, dtype=dtype, requires_grad=True)


def nodes_of(*tensors):
    """Every node the engine would visit from these tensors (the engine's own walk)."""
    roots = [t.grad_fn for t in tensors if t.grad_fn is not None]
    return engine.topological_order(roots) if roots else []


def names(nodes):
    return [n.name() for n in nodes]


def deep_chain(n=DEEP):
    """``(x, y)`` with ``y = x + c + c + ... (n times)``: n AddBackward0 nodes in a row.

    Building it takes a second or two, so it is kept between checks, and verified each time it
    is handed out (about 30 ms): a submission can reach the kept graph (``gc.get_objects``) and
    cut it short, which would let a recursive walk pass. A graph that is not exactly the chain is
    built again. AddBackward0 saves nothing, so backward may run through it any number of times;
    never add hooks to it.
    """
    x, y = _built_chain(n)
    if not _is_chain(x, y, n):
        _built_chain.cache_clear()
        x, y = _built_chain(n)
        expect(_is_chain(x, y, n), "the grader could not build its deep test graph (chibigrad's addition was "
                                   "changed?)")
    return x, y


@functools.lru_cache(maxsize=None)
def _built_chain(n):
    x, c = leaf(), torch.tensor(1.0, dtype=torch.float64)
    y = x
    for _ in range(n):
        y = y + c
    return x, y


def _is_chain(x, y, n):
    """``y``'s graph is n additions of a constant in a row down to ``x``'s AccumulateGrad, with no
    hooks or other attributes, and ``x`` is a float64 leaf holding 1.0. Compared with a fresh
    two-node chain, never with anything kept."""
    a, c = leaf(), torch.tensor(1.0, dtype=torch.float64)
    sample = (a + c) + c
    add, keys = type(sample.grad_fn), set(vars(sample.grad_fn))
    if type(x) is not type(a) or x.grad_fn is not None or not x.requires_grad or x.dtype != a.dtype \
            or np.asarray(x._array).shape != () or float(x._array) != 1.0 or type(y) is not type(a):
        return False
    node = y.grad_fn
    for _ in range(n):
        if type(node) is not add or set(vars(node)) != keys or node._next_nrs != (0, 0) \
                or len(node._next_nodes) != 2 or node._next_nodes[1] is not None:
            return False
        node = node._next_nodes[0]
    return type(node) is AccumulateGrad and node.variable is x and set(vars(node)) <= set(vars(a._accumulator()))


def diamond_chain(k, x=None):
    """``k`` diamonds in a row (y = sin(y) * cos(y)): 2**k paths from the top to ``x``."""
    x = leaf(0.3) if x is None else x
    y = x
    for _ in range(k):
        y = y.sin() * y.cos() + y * 0.5
    return x, y


UNARY = (  # tuples, as every constant of the checks: nothing a submission can edit in place
    ("tanh", lambda a: a.tanh()),
    ("sin", lambda a: a.sin()),
    ("scale", lambda a: a * 0.5),
    ("square", lambda a: a ** 2),
    ("neg", lambda a: -a),
)
BINARY = (
    ("add", lambda a, b: a + b),
    ("mul", lambda a, b: a * b),
    ("sub", lambda a, b: a - b),
)


def random_graph(seed, n_ops=30, n_leaves=4, shapes=((),), constants=True, reductions=False):
    """A random define-by-run graph: ``(output, leaves)``.

    Operands are drawn mostly from the latest values (long paths) and
    sometimes from older ones (shared subgraphs, leaves used many times);
    ``constants`` adds tensors that need no gradient (``None`` edges);
    ``reductions`` adds keepdim sums. Values stay near 1 (tanh, sin, scale).
    """
    rng = np.random.default_rng(seed)
    leaves = [leaf(shape=shapes[rng.integers(len(shapes))], rng=rng) for _ in range(n_leaves)]
    values = list(leaves)
    if constants:
        values.append(torch.tensor(rng.uniform(0.5, 1.5, shapes[0]), dtype=torch.float64))
    for _ in range(n_ops):
        pick = lambda: values[-1 - min(int(rng.geometric(0.4)) - 1, len(values) - 1)]  # noqa: E731
        if reductions and values[-1].ndim > 0 and rng.random() < 0.1:
            values.append(values[-1].sum(int(rng.integers(values[-1].ndim)), keepdim=True))
        elif rng.random() < 0.4:
            values.append(UNARY[rng.integers(len(UNARY))][1](pick()))
        else:
            a, b = pick(), values[rng.integers(len(values))]
            values.append(BINARY[rng.integers(len(BINARY))][1](a, b).tanh())
    out = values[-1]
    if out.grad_fn is None:  # only constants were combined: tie the output to a leaf
        out = out + leaves[0]
    return out, leaves


# ---- gradients --------------------------------------------------------------------------------------------------

def numerical_grads(f, inputs, weight, eps=1e-6):
    """Central differences of ``sum(f(*inputs) * weight)`` with respect to every
    tensor input, in float64 (``None`` for non-tensor inputs)."""
    base = [x._array.astype(np.float64) if isinstance(x, torch.Tensor) else x for x in inputs]
    w = np.asarray(weight, dtype=np.float64)

    def value(arrays):
        with torch.no_grad():
            args = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in arrays]
            return float((f(*args)._array * w).sum())

    grads = []
    for k, x in enumerate(base):
        if not isinstance(x, np.ndarray):
            grads.append(None)
            continue
        g = np.zeros_like(x)
        for index in np.ndindex(x.shape):
            shifted = []
            for sign in (1, -1):
                arrays = list(base)
                arrays[k] = x.copy()
                arrays[k][index] += sign * eps
                shifted.append(value(arrays))
            g[index] = (shifted[0] - shifted[1]) / (2 * eps)
        grads.append(g)
    return grads


def gradient_check(what, f, inputs, seed=0, rtol=1e-6, atol=1e-8):
    """Gradients through the real engine equal central differences (float64 inputs).

    Each tensor input that requires grad is checked; the output is weighted
    by random numbers so a backward that ignores ``grad_output`` fails.
    """
    out = call(what, f, *inputs)
    weight = np.random.default_rng(seed).standard_normal(out.shape)
    wanted = [x for x in inputs if isinstance(x, torch.Tensor) and x.requires_grad]
    got = call(f"backward of {what}", torch.autograd.grad, (out * torch.tensor(weight)).sum(), wanted,
               allow_unused=True)
    got = dict(zip(map(id, wanted), got))
    numeric = numerical_grads(f, inputs, weight)
    for k, (x, expected) in enumerate(zip(inputs, numeric)):
        if id(x) not in got:
            continue
        g = got[id(x)]
        expect(g is not None, f"{what}: input {k} got no gradient (None), but it requires grad")
        assert_close(g, expected, f"{what}: gradient of input {k} (shape {tuple(x.shape)})", rtol, atol)


def assert_close(actual, expected, what, rtol=1e-6, atol=1e-8):
    """``actual`` (a Tensor) has ``expected``'s shape and values; the message shows both."""
    expect(isinstance(actual, torch.Tensor), f"{what}: expected a Tensor, got {type(actual).__name__}")
    expected = np.asarray(expected)
    expect(tuple(actual.shape) == expected.shape,
           f"{what}: shape {tuple(actual.shape)}, expected {expected.shape}")
    a = np.asarray(actual._array, dtype=np.float64)
    if not np.allclose(a, expected, rtol=rtol, atol=atol):
        worst = np.unravel_index(np.argmax(np.abs(a - expected)), a.shape) if a.ndim else ()
        raise AssertionError(f"{what}: wrong values, e.g. at index {tuple(int(i) for i in worst)}: got "
                             f"{a[worst]!r}, expected {expected[worst]!r}\n got:\n{a}\n expected:\n{expected}")


def engine_grads(output, inputs, grad_output=None):
    """What chibigrad's engine computes: d(output)/d(inputs), graph kept."""
    grad_output = torch.ones_like(output) if grad_output is None else grad_output
    return torch.autograd.grad(output, inputs, grad_output, retain_graph=True, allow_unused=True)
