"""Hidden checks of 06c_vmap (batching rules written PyTorch's way, per-sample gradients), run by the judge.

A rule is called in the student process on samples stacked at a random batch dim (``cases``' ``batch_rule``
observer: its result with the batch moved first, the bdim it returned, how many ops it ran); inside ``vmap``
with the release's ``your_rule`` (``vmap_with_rule``); per-sample gradients with the number of backward passes
(``per_sample``). The expected values are numpy's, per sample, computed here: the loop vmap must equal.

Counts taken in the student process only explain a failure: that process can fake them. Whether a rule
batches is decided by the judge's clock (``expect_fast``): a batch of a million samples, drawn from a seed
there, answered within BIG_LIMIT seconds with the rows the judge asks for. Whether per_sample_grads computes
every gradient at once is decided the same way (``expect_one_pass``, PSG_BATCH samples within PSG_LIMIT
seconds); the release's ``loss`` has no matrix product so that no op of it loops in the student edition.
"""
import numpy as np

from ..cases import vmap_big_args
from ..judge import exercise, expect, expect_array

BIG_BATCH = 1_000_000  # samples: a loop over them takes about 20 s (about 20 us a sample), a rule about 0.05 s
BIG_LIMIT = 2.0  # seconds the judge waits for a rule on BIG_BATCH samples (the op counts are the student process's)
PSG_BATCH = 100_000  # samples: one grad per sample takes 100 s or more (1-6 ms a sample), vmap(grad) 0.1-0.5 s
PSG_LIMIT = 5.0  # seconds the judge waits for per_sample_grads on PSG_BATCH samples (load 7 on 2 cores: 0.45 s)


def _stack(samples, bdim):
    return np.stack(samples, bdim)


def _rule_case(args, what):
    return {"recipe": "vmap_rule", "args": list(args), "what": what}


def expect_rule(student, name, what, args, expected, dtype="float64", tol=1e-9):
    """``name(*args)`` returns (out, out_bdim) holding ``expected`` (the samples' results, stacked first)."""
    got = student.call(name, _rule_case(args, what), observe="batch_rule", what=what)
    expect(got["type"] == "tuple", f"{what}: a rule returns (result, result's batch dim), got {got['type']}")
    expect(got["value"] is not None, f"{what}: the batch dim should be an int naming a dim of the result (a "
                                     f"{got['out']}), got {got['bdim']}")
    expect_array(got["value"], expected, f"{what}: the result with its batch dim {got['bdim']} moved first", tol=tol)
    expect(got["dtype"] == f"torch.{dtype}", f"{what}: the result should be {dtype}, got {got['dtype']}")
    return got


def expect_batched(student, name, what, small, large):
    """The rule runs as many ops for a small batch as for a large one: one call of the op, not one per sample."""
    counts = [student.call(name, _rule_case(args, what), observe="batch_rule", what=what)["ops"]
              for args in (small, large)]
    expect(counts[0] == counts[1], f"{what}: your rule ran {counts[0]} ops for a batch of 2 and {counts[1]} for a "
                                   "batch of 9; a batching rule calls the op on the whole batch at once, not once "
                                   "per sample")


def expect_fast(student, name, what, specs, reference, seed):
    """On BIG_BATCH samples the rule answers within BIG_LIMIT seconds, timed by the judge, with the right rows:
    the one check of "the op runs once on the whole batch" that the student process cannot fake."""
    rows = sorted(np.random.default_rng(seed).choice(BIG_BATCH, 5, replace=False).tolist())
    case = {"recipe": "vmap_big", "specs": specs, "seed": seed, "rows": rows, "what": what}
    try:
        got = student.call(name, case, observe="batch_rule_rows", timeout=BIG_LIMIT, what=what)
    except AssertionError as err:
        if "took longer than" not in str(err):
            raise
        raise AssertionError(f"{what}: no answer within {BIG_LIMIT:g} s; a batching rule calls the op once on the "
                             f"whole batch and answers in a fraction of a second, a loop over {BIG_BATCH:,} samples "
                             "cannot") from None
    expect(got.get("value") is not None, f"{what}: a rule returns (result, result's batch dim), got {got['type']}")
    expected = reference(*vmap_big_args(specs, seed))
    expect(tuple(got["shape"]) == expected.shape, f"{what}: the result with its batch dim moved first has shape "
                                                  f"{tuple(got['shape'])}, expected {expected.shape}")
    expect_array(got["value"], expected[rows], f"{what}: samples {rows} of the result", tol=1e-9)


def expect_vmap(student, name, op, program, what, args, in_dims, expected, **extra):
    """vmap(program, in_dims)(*args) with the student's rule batching ``op`` gives ``expected``."""
    case = {"recipe": "vmap_engine", "args": list(args), "op": op, "program": program, "in_dims": list(in_dims),
            "what": what, **extra}
    got = student.call(name, case, observe="vmap_with_rule", what=what)
    expect_array(got["value"], expected, f"{what}: vmap's result", tol=1e-9)


def _bdims(rng, ndim):
    """Batch dims to try for samples of ``ndim`` dims: first, last and one drawn in between."""
    return sorted({0, ndim, int(rng.integers(0, ndim + 1))})


# ---- Exercise 1: sum_rule --------------------------------------------------------------------------------------------

SUM_CASES = (((3, 4), 1, False), ((3, 4), -2, True), ((2, 3, 4), (0, 2), False), ((2, 3, 4), (-1, 1), True),
             ((2, 3, 4), None, False), ((5,), 0, False), ((5,), -1, True), ((5,), None, False),
             ((2, 1, 3), 1, False), ((4, 2, 3), -3, False))


def _sum(sample, dim, keepdim):
    return sample.sum() if dim is None else sample.sum(axis=dim, keepdims=keepdim)


@exercise("06c_vmap:sum_rule")
def sum_rule(student):
    rng = np.random.default_rng(601)
    for shape, dim, keepdim in SUM_CASES:
        size = int(rng.integers(1, 6))
        samples = [rng.uniform(-2.0, 2.0, shape) for _ in range(size)]
        expected = np.stack([_sum(s, dim, keepdim) for s in samples])
        for bdim in _bdims(rng, len(shape)):
            what = (f"sum_rule(x, {bdim}, {dim}, {keepdim}), {size} samples of shape {shape} stacked at dim {bdim}")
            expect_rule(student, "sum_rule", what, (_stack(samples, bdim), bdim, dim, keepdim), expected)
    samples = [rng.uniform(-2.0, 2.0, (3, 2)).astype(np.float32) for _ in range(4)]
    expect_rule(student, "sum_rule", "sum_rule on float32 samples (3, 2) stacked at dim 2, dim 0",
                (_stack(samples, 2), 2, 0, False), np.stack([s.sum(0) for s in samples]), "float32", tol=1e-5)
    make = lambda n: _stack([rng.uniform(-1.0, 1.0, (3, 4)) for _ in range(n)], 1)  # noqa: E731
    expect_batched(student, "sum_rule", "sum_rule(x, 1, -1, False) on batches of 2 and 9 samples (3, 4)",
                   (make(2), 1, -1, False), (make(9), 1, -1, False))
    expect_fast(student, "sum_rule", f"sum_rule(x, 1, -1, False) on {BIG_BATCH:,} samples of shape (2,)",
                [{"uniform": [2, BIG_BATCH]}, 1, -1, False], lambda x, *_: x.sum(0), 6011)
    samples = [rng.uniform(-2.0, 2.0, (2, 3, 4)) for _ in range(3)]
    for dim, keepdim, in_dim in ((1, False, 3), (-1, True, 1), (None, False, 0), ((0, 2), False, 2)):
        expect_vmap(student, "sum_rule", "sum", "sum",
                    f"vmap(lambda s: s.sum({dim}, {keepdim}) * 2, in_dims={in_dim}) with your rule, samples (2, 3, 4)",
                    [_stack(samples, in_dim)], [in_dim], 2 * np.stack([_sum(s, dim, keepdim) for s in samples]),
                    dim=dim, keepdim=keepdim)
    expect_vmap(student, "sum_rule", "sum", "grad_sum",
                "vmap(grad(lambda s: (s.sum(-1) ** 2).sum()), in_dims=1) with your rule, samples (2, 3, 4)",
                [_stack(samples, 1)], [1], np.stack([2 * np.broadcast_to(s.sum(-1, keepdims=True), s.shape)
                                                     for s in samples]), dim=-1)


# ---- Exercise 2: mm_rule ---------------------------------------------------------------------------------------------

MM_SHAPES = ((2, 3, 4), (1, 5, 2), (4, 1, 3), (3, 3, 3), (2, 4, 1))  # (n, k, m)


@exercise("06c_vmap:mm_rule")
def mm_rule(student):
    rng = np.random.default_rng(602)
    for n, k, m in MM_SHAPES:
        size = int(rng.integers(1, 6))
        A = [rng.uniform(-2.0, 2.0, (n, k)) for _ in range(size)]
        B = [rng.uniform(-2.0, 2.0, (k, m)) for _ in range(size)]
        for a_bdim, b_bdim in ((0, 0), (1, 2), (2, 0), (0, None), (1, None), (2, None), (None, 0), (None, 1),
                               (None, 2)):
            a = A[0] if a_bdim is None else _stack(A, a_bdim)
            b = B[0] if b_bdim is None else _stack(B, b_bdim)
            expected = np.stack([(A[0] if a_bdim is None else x) @ (B[0] if b_bdim is None else y)
                                 for x, y in zip(A, B)])
            what = (f"mm_rule(a, {a_bdim}, b, {b_bdim}), a: " +
                    (f"one ({n}, {k}) matrix" if a_bdim is None else f"{size} ({n}, {k}) matrices at dim {a_bdim}") +
                    ", b: " + (f"one ({k}, {m}) matrix" if b_bdim is None else
                               f"{size} ({k}, {m}) matrices at dim {b_bdim}"))
            expect_rule(student, "mm_rule", what, (a, a_bdim, b, b_bdim), expected)
    A = [rng.uniform(-2.0, 2.0, (2, 3)).astype(np.float32) for _ in range(3)]
    B = rng.uniform(-2.0, 2.0, (3, 2)).astype(np.float32)
    expect_rule(student, "mm_rule", "mm_rule on float32, a batched at dim 1, b one matrix",
                (_stack(A, 1), 1, B, None), np.stack([x @ B for x in A]), "float32", tol=1e-5)
    for (ia, ib) in ((None, 1), (2, None), (1, 0)):
        make = lambda n, shape, bdim: (rng.uniform(-1.0, 1.0, shape) if bdim is None else  # noqa: E731
                                       _stack([rng.uniform(-1.0, 1.0, shape) for _ in range(n)], bdim))
        expect_batched(student, "mm_rule", f"mm_rule(a, {ia}, b, {ib}) on batches of 2 and 9",
                       (make(2, (2, 3), ia), ia, make(2, (3, 4), ib), ib),
                       (make(9, (2, 3), ia), ia, make(9, (3, 4), ib), ib))
    expect_fast(student, "mm_rule", f"mm_rule(a, 2, b, None), a: {BIG_BATCH:,} (1, 2) matrices, b: one (2, 2)",
                [{"uniform": [1, 2, BIG_BATCH]}, 2, {"uniform": [2, 2]}, None],
                lambda a, _, b, __: np.moveaxis(a, 2, 0) @ b, 6021)
    A = [rng.uniform(-2.0, 2.0, (3, 2)) for _ in range(4)]
    B = [rng.uniform(-2.0, 2.0, (2, 5)) for _ in range(4)]
    for ia, ib in ((0, 2), (None, 1), (2, None)):
        a = A[0] if ia is None else _stack(A, ia)
        b = B[0] if ib is None else _stack(B, ib)
        expected = np.stack([(A[0] if ia is None else x) @ (B[0] if ib is None else y) for x, y in zip(A, B)])
        expect_vmap(student, "mm_rule", "mm", "mm", f"vmap(torch.mm, in_dims=({ia}, {ib})) with your rule",
                    [a, b], [ia, ib], expected)


# ---- Exercise 3: index_select_rule -----------------------------------------------------------------------------------

INDEX_CASES = (((3, 4), 0, 2), ((3, 4), -1, 5), ((5,), 0, 3), ((5,), -1, 1), ((2, 3, 4), 1, 4), ((2, 3, 4), -1, 2),
               ((2, 3, 4), 0, 3), ((3, 1, 2), -3, 2))  # (sample shape, dim, how many indices)


@exercise("06c_vmap:index_select_rule")
def index_select_rule(student):
    rng = np.random.default_rng(603)
    for shape, dim, k in INDEX_CASES:
        size = int(rng.integers(2, 6))
        X = [rng.uniform(-2.0, 2.0, shape) for _ in range(size)]
        I = [rng.integers(0, shape[dim], k) for _ in range(size)]  # noqa: E741
        for x_bdim, i_bdim in ((0, None), (len(shape), None), (None, 0), (None, 1), (0, 0),
                               (int(rng.integers(0, len(shape) + 1)), 1)):
            x = X[0] if x_bdim is None else _stack(X, x_bdim)
            index = I[0] if i_bdim is None else _stack(I, i_bdim)
            expected = np.stack([np.take(X[0] if x_bdim is None else s, I[0] if i_bdim is None else i, axis=dim)
                                 for s, i in zip(X, I)])
            what = (f"index_select_rule(x, {x_bdim}, {dim}, index, {i_bdim}), x: " +
                    (f"one {shape} tensor" if x_bdim is None else f"{size} samples {shape} at dim {x_bdim}") +
                    f", index: " + (f"{k} indices for every sample" if i_bdim is None else
                                    f"{k} indices per sample, stacked at dim {i_bdim}"))
            expect_rule(student, "index_select_rule", what, (x, x_bdim, dim, index, i_bdim), expected)
    for x_bdim, i_bdim in ((1, None), (None, 0), (2, 1)):
        def make(n):
            x = rng.uniform(-1.0, 1.0, (3, 4)) if x_bdim is None else \
                _stack([rng.uniform(-1.0, 1.0, (3, 4)) for _ in range(n)], x_bdim)
            index = rng.integers(0, 4, 2) if i_bdim is None else _stack([rng.integers(0, 4, 2) for _ in range(n)],
                                                                        i_bdim)
            return x, x_bdim, 1, index, i_bdim
        expect_batched(student, "index_select_rule",
                       f"index_select_rule(x, {x_bdim}, 1, index, {i_bdim}) on batches of 2 and 9", make(2), make(9))
    expect_fast(student, "index_select_rule", f"index_select_rule(x, 1, 0, index, 0) on {BIG_BATCH:,} samples (3,), "
                "2 indices per sample",
                [{"uniform": [3, BIG_BATCH]}, 1, 0, {"integers": 3, "shape": [BIG_BATCH, 2]}, 0],
                lambda x, _, __, index, ___: np.take_along_axis(x.T, index, 1), 6031)
    X = [rng.uniform(-2.0, 2.0, (2, 5)) for _ in range(4)]
    I = [rng.integers(0, 5, 3) for _ in range(4)]  # noqa: E741
    for ix, ii in ((0, 0), (None, 0), (2, None), (1, 0)):
        x = X[0] if ix is None else _stack(X, ix)
        index = I[0] if ii is None else _stack(I, ii)
        expected = np.stack([np.take(X[0] if ix is None else s, I[0] if ii is None else i, axis=1)
                             for s, i in zip(X, I)])
        expect_vmap(student, "index_select_rule", "index_select", "index_select",
                    f"vmap(lambda s, i: torch.index_select(s, -1, i), in_dims=({ix}, {ii})) with your rule",
                    [x, index], [ix, ii], expected, dim=-1)


# ---- Exercise 4: per_sample_grads ------------------------------------------------------------------------------------

def _per_sample(W, b, xs, ys):
    """d/d(W, b) of the cross-entropy of each sample alone: softmax(x W + b) - onehot(y), times x for W."""
    logits = xs @ W + b
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[np.arange(len(ys)), ys] -= 1.0
    return np.einsum("ni,nj->nij", xs, p), p


@exercise("06c_vmap:per_sample_grads")
def per_sample_grads(student):
    rng = np.random.default_rng(604)
    for n, d, c, dtype in ((5, 4, 3, np.float64), (1, 4, 3, np.float64), (8, 2, 5, np.float64), (3, 6, 2, np.float64),
                           (7, 3, 4, np.float32)):
        W, b = rng.uniform(-1.0, 1.0, (d, c)).astype(dtype), rng.uniform(-1.0, 1.0, c).astype(dtype)
        xs, ys = rng.uniform(-2.0, 2.0, (n, d)).astype(dtype), rng.integers(0, c, n)
        what = f"per_sample_grads(params, xs, ys), {n} samples, W of shape ({d}, {c})" + \
            (", float32" if dtype == np.float32 else "")
        got = student.call("per_sample_grads", {"recipe": "vmap_params", "args": [W, b, xs, ys], "what": what},
                           observe="per_sample", what=what)
        expect(got["grads"] is not None and len(got["grads"]) == 2,
               f"{what}: expected a tuple (dW, db), got {got['type']}")
        dW, db = _per_sample(W.astype(np.float64), b.astype(np.float64), xs.astype(np.float64), ys)
        tol = 1e-5 if dtype == np.float32 else 1e-9
        expect_array(got["grads"][0], dW, f"{what}: dW (one gradient per sample)", tol=tol)
        expect_array(got["grads"][1], db, f"{what}: db (one gradient per sample)", tol=tol)
    expect_one_pass(student, f"{got['passes']} backward passes for {n} samples", 6041)


def expect_one_pass(student, passes, seed):
    """On PSG_BATCH samples per_sample_grads answers within PSG_LIMIT seconds, timed by the judge, with the right
    rows: one backward pass for the whole batch, not one per sample (``passes``, what the student process
    counted on a small batch, only explains a failure)."""
    rows = sorted(np.random.default_rng(seed).choice(PSG_BATCH, 5, replace=False).tolist())
    specs = [{"uniform": [4, 3]}, {"uniform": [3]}, {"uniform": [PSG_BATCH, 4]}, {"integers": 3, "shape": [PSG_BATCH]}]
    what = f"per_sample_grads(params, xs, ys), {PSG_BATCH:,} samples, W of shape (4, 3)"
    case = {"recipe": "vmap_params_big", "specs": specs, "seed": seed, "rows": rows, "what": what}
    try:
        got = student.call("per_sample_grads", case, observe="per_sample_rows", timeout=PSG_LIMIT, what=what)
    except AssertionError as err:
        if "took longer than" not in str(err):
            raise
        raise AssertionError(f"{what}: no answer within {PSG_LIMIT:g} s; vmap(grad(...)) computes every sample's "
                             f"gradient in one backward pass and answers in a fraction of a second, one pass per "
                             f"sample cannot (your function ran {passes})") from None
    expect(got["grads"] is not None and len(got["grads"]) == 2, f"{what}: expected a tuple (dW, db), got {got['type']}")
    W, b, xs, ys = vmap_big_args(specs, seed)
    expected = _per_sample(W, b, xs[rows], ys[rows])
    for name, shape, g, want in zip(("dW", "db"), got["shapes"], got["grads"], expected):
        expect(shape is not None and tuple(shape) == (PSG_BATCH, *want.shape[1:]),
               f"{what}: {name} has shape {shape}, expected {(PSG_BATCH, *want.shape[1:])}")
        expect_array(g, want, f"{what}: {name} of samples {rows}", tol=1e-9)
