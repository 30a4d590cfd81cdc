"""Property tests: random expression graphs, differentiated by autograd and by
central differences, must agree.

Hypothesis draws a small program: float64 inputs of broadcastable shapes, then
a sequence of steps, each applying an op (pointwise with safe domains,
broadcasting binary ops, reductions with dim/keepdim, indexing, shape ops) to
earlier values -- so values are shared by several later steps. The output adds
up every value times fixed weights. Steps whose value sits near a kink (abs,
relu, clamp, max ties) or blows up are rejected, so the finite differences
measure a smooth function.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import chibigrad as torch
from chibigrad.autograd import engine

EPS = 1e-6
MARGIN = 1e-3  # distance to the nearest kink, far larger than the finite-difference step


def np_of(t):
    return t.detach()._array


def _gap(x, dim):
    """Smallest distance between the largest and second-largest entries along ``dim``."""
    a = np.moveaxis(x, dim, -1).reshape(-1, x.shape[dim]) if dim is not None else x.reshape(1, -1)
    if a.shape[1] < 2:
        return np.inf
    top = np.sort(a, axis=1)
    return np.min(top[:, -1] - top[:, -2])


# Each op: (arity, needs, apply(tensors, params), margin(arrays, params) or None)
# ``needs(shapes)`` says whether the op can take operands of these shapes.
def _any(*shapes):
    return True


def _has_dims(*shapes):
    return all(len(s) >= 1 for s in shapes)


def _broadcastable(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


UNARY = {
    "sin": (lambda t, p: t.sin(), None),
    "cos": (lambda t, p: torch.cos(t), None),
    "tanh": (lambda t, p: t.tanh(), None),
    "sigmoid": (lambda t, p: torch.sigmoid(t), None),
    "neg": (lambda t, p: -t, None),
    "exp": (lambda t, p: t.tanh().exp(), None),
    "log": (lambda t, p: (1 + t * t).log(), None),
    "sqrt": (lambda t, p: torch.sqrt(t * t + 0.5), None),
    "abs": (lambda t, p: t.abs(), lambda x, p: np.min(np.abs(x), initial=np.inf)),
    "relu": (lambda t, p: torch.relu(t), lambda x, p: np.min(np.abs(x), initial=np.inf)),
    "clamp": (lambda t, p: t.clamp(-0.5, 0.5), lambda x, p: np.min(np.abs(np.abs(x) - 0.5), initial=np.inf)),
    "pow2": (lambda t, p: t ** 2, None),
    "pow3": (lambda t, p: t.pow(3), None),
    "pow_frac": (lambda t, p: (t * t + 1) ** -1.5, None),
    "rpow": (lambda t, p: 2 ** t.tanh(), None),
    "rsub": (lambda t, p: 1 - t, None),
    "rmul": (lambda t, p: 2.5 * t, None),
    "rdiv": (lambda t, p: 1 / (1 + t * t), None),
    "scalar_ops": (lambda t, p: (t + 1.5) * 0.5 - 2 / 3, None),
}

BINARY = {
    "add": (lambda a, b, p: a + b, None),
    "sub": (lambda a, b, p: a - b, None),
    "mul": (lambda a, b, p: a * b, None),
    "div": (lambda a, b, p: a / (1 + b * b), None),
    "pow": (lambda a, b, p: (1 + a * a) ** b.tanh(), None),
    "maximum": (lambda a, b, p: torch.maximum(a, b), lambda a, b, p: np.min(np.abs(a - b), initial=np.inf)),
    "minimum": (lambda a, b, p: torch.minimum(a, b), lambda a, b, p: np.min(np.abs(a - b), initial=np.inf)),
    "where": (lambda a, b, p: torch.where(torch.tensor(_mask(np.broadcast_shapes(a.shape, b.shape), p["seed"])), a, b),
              None),
}


def _mask(shape, seed):
    return np.random.default_rng(seed).random(shape) < 0.5


def _dim(shape, p):
    """A dim (possibly negative) drawn by ``p``, or None for a full reduction."""
    if p["dim"] is None or not shape:
        return None
    d = p["dim"] % len(shape)
    return d - len(shape) if p["negative"] else d


def _reduce(name, t, p):
    dim, keep = _dim(t.shape, p), p["keepdim"]
    if name == "sum":
        return t.sum() if dim is None else t.sum(dim, keepdim=keep)
    if name == "mean":
        return t.mean() if dim is None else torch.mean(t, dim, keepdim=keep)
    if name == "amax":
        return t.amax() if dim is None else t.amax(dim, keepdim=keep)
    if name == "max":
        return t.max() if dim is None else t.max(dim, keepdim=keep).values
    if name == "min":
        return t.min() if dim is None else t.min(dim, keepdim=keep)[0]
    if name == "prod":
        return t.prod() if dim is None else t.prod(dim, keepdim=keep)
    if name == "norm":
        return t.norm() if dim is None else t.norm(dim=dim, keepdim=keep)
    if name == "var":
        return t.var() if dim is None else t.var(dim, keepdim=keep)
    if name == "std":
        return t.std() if dim is None else t.std(dim, keepdim=keep)
    if name == "logsumexp":
        return t.logsumexp(dim if dim is not None else 0, keepdim=keep)
    if name == "softmax":
        return t.softmax(dim if dim is not None else -1)
    if name == "log_softmax":
        return t.log_softmax(dim if dim is not None else 0)
    raise AssertionError(name)


def _reduce_margin(name, x, p):
    dim = _dim(x.shape, p)
    if name in ("amax", "max"):
        return _gap(x, dim)
    if name == "min":
        return _gap(-x, dim)
    if name == "norm":
        return np.min(np.sqrt((x * x).sum(axis=dim)), initial=np.inf)
    if name in ("var", "std"):
        n = x.size if dim is None else x.shape[dim]
        return np.min(x.var(axis=dim), initial=np.inf) if n >= 2 else 0.0  # one element: nan
    return np.inf


REDUCTIONS = ["sum", "mean", "amax", "max", "min", "prod", "norm", "var", "std", "logsumexp", "softmax",
              "log_softmax"]


def _index(t, p):
    kind, n0 = p["kind"], t.shape[0]
    if kind == "select":
        return t[p["i"] % n0]
    if kind == "negative_select":
        return t[-1 - p["i"] % n0]
    if kind == "slice":
        return t[1:] if n0 >= 2 else t[:]
    if kind == "step":
        return t[..., ::2]
    if kind == "inner_slice":
        return t[:, 1:] if t.ndim >= 2 else t[1:]
    if kind == "int_array":
        return t[[0, p["i"] % n0, 0]]
    if kind == "tensor_index":
        return t[torch.tensor([p["i"] % n0, 0])]
    if kind == "mask":
        mask = _mask(t.shape, p["seed"])
        mask.flat[p["i"] % mask.size] = True  # at least one element
        return t[torch.tensor(mask)]
    raise AssertionError(kind)


def _shape_op(t, p):
    kind = p["kind"]
    if kind == "flatten":
        return t.reshape(-1)
    if kind == "view":  # (view needs row-major data, as in PyTorch: a transposed value is made contiguous)
        t = t.contiguous()
        return t.view(*t.shape[::-1]) if t.ndim >= 1 else t.view(1)
    if kind == "unsqueeze":
        return t.unsqueeze(0)
    if kind == "transpose":
        return t.transpose(0, -1) if t.ndim >= 2 else t
    if kind == "T":  # (on other than 2 dims .T is deprecated, and warns as in PyTorch)
        return t.T if t.ndim == 2 else t.permute(*range(t.ndim - 1, -1, -1))
    if kind == "expand":
        return t.expand(2, *t.shape)
    if kind == "permute":
        return t.permute(*range(t.ndim - 1, -1, -1))
    raise AssertionError(kind)


def _view(t, kind, i):
    """A view of ``t``: basic indexing, a transpose, a flat view or a view of a view."""
    if kind == "select":
        return t[i % t.shape[0]]
    if kind == "slice":
        return t[1:] if t.shape[0] >= 2 else t[:]
    if kind == "step":
        return t[..., ::2]
    if kind == "inner_slice":
        return t[:, 1:] if t.ndim >= 2 and t.shape[1] >= 2 else t[:1]
    if kind == "transpose":
        return t.transpose(0, -1)
    if kind == "flat":  # a view, unless t is transposed (its base then is too: view_positions's general case)
        return t.reshape(-1)
    if kind == "nested":
        return t[:][..., -1:]
    raise AssertionError(kind)


INPLACE = {
    "mul_": lambda v, s: v.mul_(s.tanh()),
    "add_": lambda v, s: v.add_(s),
    "iadd": lambda v, s: v.__iadd__(s * s),
    "div_": lambda v, s: v.div_(1 + s * s),
    "zero_": lambda v, s: v.zero_(),
    "copy_": lambda v, s: v.copy_(s * 2),
    "setitem": lambda v, s: v.__setitem__(Ellipsis, s.sin()),
}


def _inplace(t, s, p):
    """Change a fresh copy of ``t`` through one view while another view, made before, looks on:
    the base's history is rewritten (CopySlices) and the older view gets a new grad_fn."""
    base = t * 1.0
    before = _view(base, p["before"], p["i"])
    INPLACE[p["op"]](_view(base, p["view"], p["j"]), s.sum())
    return base + before.sum()


def run_step(values, step):
    """Apply one step to the list of values (tensors); return the new value."""
    kind, name, args, p = step
    ts = [values[i] for i in args]
    if kind == "unary":
        return UNARY[name][0](ts[0], p)
    if kind == "binary":
        return BINARY[name][0](ts[0], ts[1], p)
    if kind == "reduce":
        return _reduce(name, ts[0], p)
    if kind == "index":
        return _index(ts[0], p)
    if kind == "shape":
        return _shape_op(ts[0], p)
    if kind == "cat":
        return torch.cat([ts[0], ts[1]], dim=0) if name == "cat" else torch.stack([ts[0], ts[1]])
    if kind == "matmul":
        return ts[0] @ ts[1]
    if kind == "inplace":
        return _inplace(ts[0], ts[1], p)
    raise AssertionError(kind)


def step_margin(values, step):
    kind, name, args, p = step
    xs = [np_of(values[i]) for i in args]
    if kind == "unary" and UNARY[name][1]:
        return UNARY[name][1](xs[0], p)
    if kind == "binary" and BINARY[name][1]:
        return BINARY[name][1](xs[0], xs[1], p)
    if kind == "reduce":
        return _reduce_margin(name, xs[0], p)
    return np.inf


@st.composite
def programs(draw):
    """Inputs (numpy float64 arrays) and steps that use them and each other.

    Hypothesis draws a seed; the program's structure comes from a numpy
    generator on it, so every op is drawn as often as every other (Hypothesis's
    own choices favour the first few options)."""
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    base = [(3,), (2, 3), (3, 2), (2, 2, 3)][rng.integers(4)]
    inputs = []
    for _ in range(rng.integers(1, 4)):
        drop = rng.integers(len(base))  # leading dims dropped, others maybe 1: broadcasting
        shape = tuple(1 if rng.random() < 0.25 else s for s in base[drop:])
        inputs.append(rng.uniform(-1.5, 1.5, shape))
    values = [torch.tensor(x) for x in inputs]
    steps, wanted = [], rng.integers(3, 10)
    for _ in range(3 * wanted):
        if len(steps) == wanted:
            break
        step = _draw_step(rng, values)
        if step is None:
            continue
        with torch.no_grad():
            value = run_step(values, step)
        if value.numel() == 0:  # e.g. x[:, 1:] of a (2, 1) value
            continue
        values.append(value)
        steps.append(step)
    return inputs, steps, int(rng.integers(2 ** 16))


def _draw_step(rng, values):
    n = len(values)

    def operand():
        return int(rng.integers(max(0, n - 3), n)) if rng.random() < 0.7 else int(rng.integers(n))  # mostly recent

    def pick(options):
        return options[rng.integers(len(options))]

    kind = pick(["unary", "unary", "binary", "binary", "reduce", "reduce", "index", "shape", "cat", "matmul",
                 "inplace"])
    a = operand()
    sa = tuple(values[a].shape)
    if kind == "unary":
        return ("unary", pick(sorted(UNARY)), (a,), {})
    if kind == "binary":
        b = operand()
        if not _broadcastable(sa, tuple(values[b].shape)) or values[a].numel() * values[b].numel() > 144:
            return None
        return ("binary", pick(sorted(BINARY)), (a, b), {"seed": int(rng.integers(100))})
    if kind == "reduce":
        p = {"dim": pick([None, 0, 1, 2, 3]) if sa else None, "keepdim": bool(rng.random() < 0.5),
             "negative": bool(rng.random() < 0.5)}
        return ("reduce", pick(REDUCTIONS if sa else REDUCTIONS[:-3]), (a,), p)  # softmax & co. need a dim
    if kind == "index":
        if not sa:
            return None
        p = {"kind": pick(["select", "negative_select", "slice", "step", "inner_slice", "int_array", "tensor_index",
                           "mask"]), "i": int(rng.integers(6)), "seed": int(rng.integers(100))}
        return ("index", "index", (a,), p)
    if kind == "shape":
        if values[a].numel() > 48:
            return None
        kinds = ["flatten", "view", "unsqueeze", "expand"] + (["transpose", "T", "permute"] if len(sa) >= 2 else [])
        return ("shape", "shape", (a,), {"kind": pick(kinds)})
    b = operand()
    sb = tuple(values[b].shape)
    if kind == "inplace":
        if not sa:
            return None
        views, op = ["select", "slice", "step", "inner_slice", "transpose", "flat", "nested"], pick(sorted(INPLACE))
        return ("inplace", op, (a, b), {"op": op, "before": pick(views), "view": pick(views),
                                        "i": int(rng.integers(6)), "j": int(rng.integers(6))})
    if kind == "cat":
        name = pick(["cat", "stack"])
        if not sa or (name == "stack" and sa != sb) or (name == "cat" and (len(sa) != len(sb) or sa[1:] != sb[1:])):
            return None
        return ("cat", name, (a, b), {})
    if not (1 <= len(sa) <= 2 and 1 <= len(sb) <= 2 and sa[-1] == sb[0]):  # matmul
        return None
    return ("matmul", "matmul", (a, b), {})


def evaluate(inputs, steps, weights_seed):
    """Replay the program on float64 inputs; return (scalar output, leaves, margin)."""
    leaves = [torch.tensor(x, requires_grad=True) for x in inputs]
    values = list(leaves)
    margin = np.inf
    for step in steps:
        values.append(run_step(values, step))
        margin = min(margin, step_margin(values, step))
    rng = np.random.default_rng(weights_seed)
    out = sum((v * torch.tensor(rng.uniform(0.5, 1.5, tuple(v.shape)))).sum() for v in values)
    scale = max(float(np.max(np.abs(np_of(v)), initial=0.0)) for v in values)
    return out, leaves, margin, scale


def central_differences(inputs, steps, weights_seed):
    grads = []
    with torch.no_grad():
        for k, x in enumerate(inputs):
            g = np.zeros_like(x)
            for i in np.ndindex(x.shape):
                shifted = [y.copy() for y in inputs]
                shifted[k][i] = x[i] + EPS
                hi = evaluate(shifted, steps, weights_seed)[0].item()
                shifted[k][i] = x[i] - EPS
                lo = evaluate(shifted, steps, weights_seed)[0].item()
                g[i] = (hi - lo) / (2 * EPS)
            grads.append(g)
    return grads


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")  # a reduction over one element: nan, as PyTorch
@settings(max_examples=50, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_autograd_matches_central_differences(program):
    inputs, steps, weights_seed = program
    out, leaves, margin, scale = evaluate(inputs, steps, weights_seed)
    assume(margin > MARGIN and scale < 1e3 and np.isfinite(out.item()))
    out.backward()
    expected = central_differences(inputs, steps, weights_seed)
    for leaf, g in zip(leaves, expected):
        assert leaf.grad.shape == leaf.shape and leaf.grad.dtype is torch.float64
        np.testing.assert_allclose(np_of(leaf.grad), g, rtol=1e-5, atol=1e-6 * (1 + np.max(np.abs(g))))


def dfs_order(roots):
    """Reverse post-order of an iterative depth-first search (see tests/test_engine.py)."""
    post, seen, stack = [], set(roots), [(r, iter(r.next_functions)) for r in roots]
    while stack:
        node, edges = stack[-1]
        nxt = next((n for n, _ in edges if n is not None and n not in seen), None)
        if nxt is None:
            stack.pop()
            post.append(node)
        else:
            seen.add(nxt)
            stack.append((nxt, iter(nxt.next_functions)))
    return post[::-1]


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")  # a reduction over one element: nan, as PyTorch
@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_autograd_grad_agrees_with_backward_and_with_a_dfs_ordering(program):
    inputs, steps, weights_seed = program
    out, leaves, margin, _ = evaluate(inputs, steps, weights_seed)
    assume(np.isfinite(out.item()))
    grads = torch.autograd.grad(out, leaves, retain_graph=True)
    with engine.use_ordering(dfs_order):
        out.backward()
    for leaf, g in zip(leaves, grads):
        np.testing.assert_allclose(np_of(leaf.grad), np_of(g), rtol=1e-12, atol=1e-12)
