"""chibigrad.compile: a compiled training step gives eager's results; guards recompile;
data-dependent Python is a graph break (the step then runs eagerly); errors name the problem."""
import collections
import logging

import numpy as np
import pytest

import chibigrad as torch
import chibigrad.nn.functional as F
from chibigrad import nn, optim
from chibigrad.compile import GraphBreak, explain, passes, trace


def make(opt_cls, seed=0, **kw):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 5))
    opt = opt_cls(model.parameters(), **kw)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return model, opt, step


def batch(n=8, seed=0):
    rng = np.random.default_rng(seed)
    return torch.from_numpy(rng.standard_normal((n, 12), dtype=np.float32)), torch.from_numpy(rng.integers(0, 5, n))


@pytest.mark.parametrize("opt_cls, kw", [
    (optim.SGD, dict(lr=0.1)),
    (optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3)),
    (optim.Adam, dict(lr=1e-2)),
    (optim.AdamW, dict(lr=1e-2, amsgrad=True)),
])
def test_steps_equal_eager_bitwise(opt_cls, kw):
    eager_model, eager_opt, eager_step = make(opt_cls, **kw)
    model, opt, step = make(opt_cls, **kw)
    compiled = torch.compile(step)
    for i in range(6):
        x, y = batch(seed=i)
        assert compiled(x, y).item() == eager_step(x, y).item()
    assert compiled.compile_count == 2  # the first step, then once the gradients (and state) exist
    assert compiled.eager_calls == 0
    for p, q in zip(eager_model.parameters(), model.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
        for key, value in eager_opt.state[p].items():
            np.testing.assert_array_equal(value.numpy(), opt.state[q][key].numpy())


def test_generated_code_shows_forward_backward_and_update():
    _, _, step = make(optim.SGD, lr=0.1)
    compiled = torch.compile(step)
    for _ in range(3):
        compiled(*batch())
    code = compiled.code
    phases = [line.strip(" -#") for line in code.splitlines() if line.strip().startswith("# ---")]
    assert phases == ["forward", "backward", "update"]
    assert " @ " in code and "model_0_weight" in code
    assert compiled.guards.startswith("def guard(args, kwargs):")


def test_tiny_chain_matches_eager():
    def chain(y0, w, b):
        y0.grad = w.grad = b.grad = None
        y = y0
        for _ in range(50):
            y = y * w + b
        y.sum().backward()

    y0, w, b = torch.rand(4, requires_grad=True), (torch.rand(4) * 0.5).requires_grad_(), torch.rand(4,
                                                                                                   requires_grad=True)
    compiled = torch.compile(chain)
    for _ in range(3):
        compiled(y0, w, b)
    grads = [t.grad.numpy().copy() for t in (y0, w, b)]
    chain(y0, w, b)
    for g, t in zip(grads, (y0, w, b)):
        np.testing.assert_array_equal(g, t.grad.numpy())


def test_failed_guard_recompiles_and_logs(caplog):
    _, _, step = make(optim.SGD, lr=0.1)
    compiled = torch.compile(step)
    for _ in range(3):
        compiled(*batch(8))
    with caplog.at_level(logging.INFO, logger="chibigrad.compile"):
        compiled(*batch(4))
    assert compiled.compile_count == 3
    assert "x: tensor shape (8, 12) float32 -> tensor shape (4, 12) float32" in compiled.recompile_reasons[-1]
    assert "recompiling step (compile 3)" in caplog.text
    compiled(*batch(8))  # the first graph still serves batches of 8
    assert compiled.compile_count == 3


def test_guards_on_hyperparameters_and_grad_mode():
    _, opt, step = make(optim.SGD, lr=0.1)
    compiled = torch.compile(step)
    for _ in range(3):
        compiled(*batch())
    opt.param_groups[0]["lr"] = 0.05
    compiled(*batch())
    assert compiled.recompile_reasons[-1] == "opt.param_groups[0].lr: 0.1 -> 0.05"

    def forward(x):
        return x * 2

    f = torch.compile(forward)
    x = torch.ones(3)
    f(x)
    with torch.no_grad():
        f(x)
    assert f.recompile_reasons == ["grad mode: True -> False"]


def test_cache_limit_falls_back_to_eager_with_a_warning():
    f = torch.compile(lambda x: x * 2, cache_size_limit=2)
    for n in (1, 2):
        f(torch.ones(n))
    with pytest.warns(UserWarning, match=r"reached cache_size_limit \(2\).*running it eagerly"):
        out = f(torch.ones(3))
    np.testing.assert_array_equal(out.numpy(), [2, 2, 2])
    assert f.compile_count == 2 and f.eager_calls == 1


def _breaks(fn, *args):
    report = explain(fn)(*args)
    assert report.graph_count == 0 and report.graph_break_count == 1
    return report.break_reasons[0]


def test_graph_breaks_name_the_construct():
    x = torch.randn(5)
    assert _breaks(lambda t: t.tolist(), x).startswith(".tolist() hands the values to Python, at test_compile.py:")
    assert "boolean-mask indexing" in _breaks(lambda t: t[t > 0] * 2, x)
    assert "print() runs Python" in _breaks(lambda t: print(t.shape) or t * 2, x)
    assert "random numbers" in _breaks(lambda t: F.dropout(t, 0.5), x)
    assert "a comparison of a tensor's value" in _breaks(lambda t: t * 2 if t.sum().item() > 0 else t, x)
    assert "an input's array left the trace" in _breaks(lambda t: t * np.asarray(t.detach().numpy()), x)


def test_break_after_a_write_runs_eagerly_with_eager_results():
    w = torch.ones(3, requires_grad=True)

    def step():
        loss = (w * 2).sum()
        loss.backward()
        with torch.no_grad():
            w.sub_(0.1 * w.grad)
        if (w.sum() > 0):  # data-dependent Python after the update
            return 1
        return 0

    compiled = torch.compile(step)
    assert compiled() == 1 and compiled() == 1
    assert "bool() of a traced value" in compiled.graph_breaks[0]
    np.testing.assert_allclose(w.detach().numpy(), [1 - 0.2 - 0.4] * 3, rtol=1e-6)  # two real steps (grad adds up)


def test_hooks_are_graph_breaks():
    seen = []
    _, _, step = make(optim.SGD, lr=0.1)
    model = step.__closure__[0].cell_contents
    model[0].weight.register_hook(lambda g: seen.append(1))
    compiled = torch.compile(step)
    compiled(*batch())
    compiled(*batch())
    assert "a hook on model.0.weight runs Python" in compiled.graph_breaks[0]
    assert len(seen) == 2  # the hook ran at every call: eager

    def with_hook(x):
        y = x * 2
        y.register_hook(lambda g: g * 3)
        y.sum().backward()

    assert "a hook on MulBackward0" in _breaks(with_hook, torch.ones(2, requires_grad=True))


def test_data_check_before_writes_falls_back_to_eager():
    _, _, step = make(optim.SGD, lr=0.1)
    compiled = torch.compile(step)
    for _ in range(3):
        compiled(*batch())
    x, _ = batch()
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        compiled(x, torch.full((8,), 7, dtype=torch.int64))
    assert compiled.eager_calls == 1


def test_compiled_module_in_inference_and_a_clear_break_with_grad():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
    compiled = torch.compile(model)
    x = torch.randn(2, 3)
    with torch.no_grad():
        for _ in range(2):
            out = compiled(x)
        np.testing.assert_array_equal(out.numpy(), model(x).numpy())
    assert compiled.compile_count == 1 and compiled.eager_calls == 0
    compiled(x)
    assert "compile the whole step" in compiled.graph_breaks[-1]
    assert list(compiled.parameters()) == list(model.parameters())


def test_fullgraph_raises_and_bad_arguments_are_named():
    with pytest.raises(GraphBreak, match=r"\.tolist\(\).*fullgraph=True"):
        torch.compile(lambda t: t.tolist(), fullgraph=True)(torch.ones(2))
    with pytest.raises(TypeError, match="expects a function or a Module, but got int"):
        torch.compile(3)
    with pytest.raises(NotImplementedError, match="dynamic=True is not supported"):
        torch.compile(lambda t: t, dynamic=True)
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['fuse'\]"):
        torch.compile(lambda t: t, options={"fuse": True})


def test_passes_keep_results_and_rematerialisation_lowers_the_peak():
    def step(x, ws):
        h = x
        for w in ws:
            w.grad = None
            z = h @ w
            h = z * torch.sigmoid(z)  # SiLU by hand: element-wise values backward can recompute
        h.sum().backward()

    torch.manual_seed(0)
    x = torch.randn(32, 32)
    ws = [(torch.randn(32, 32) * 0.2).requires_grad_() for _ in range(6)]
    peaks, grads = {}, {}
    for remat in (False, True):
        compiled = torch.compile(step, options={"rematerialize": remat, "reuse_buffers": False})
        for _ in range(3):
            compiled(x, ws)
        peaks[remat] = passes.peak_bytes(compiled.graph)
        grads[remat] = [w.grad.numpy().copy() for w in ws]
        assert ("recomputed" in compiled.code) == remat
    step(x, ws)
    for g in grads.values():
        for a, w in zip(g, ws):
            np.testing.assert_array_equal(a, w.grad.numpy())
    assert peaks[True] < 0.9 * peaks[False]


def test_dead_code_elimination_keeps_writes_and_checks():
    from chibigrad.compile.graph import Graph
    g = Graph()
    a = g.placeholder("a", np.ones(3))
    dead = g.call(np.exp, "np.exp", (a,), {}, np.exp(np.ones(3)), "forward")
    b = g.call(np.add, "np.add", (a, 1.0), {}, np.ones(3) + 1, "forward")
    g.call(np.add, "np.add", (a, b), {"out": (a,)}, np.ones(3), "update", mutates=a)
    g.check(b, False, "forward")
    g.output([])
    assert passes.eliminate_dead_code(g) == 1
    assert dead not in g.nodes and b in g.nodes


def test_trace_returns_the_graph_as_recorded():
    w = torch.ones(3, requires_grad=True)

    def step():
        w.grad = None
        unused = w * 5  # noqa: F841 - recorded, then removed by dead-code elimination
        (w * 2).sum().backward()

    graph = trace(step)
    assert any(n.op == "call" and n.value.tolist() == [5.0, 5.0, 5.0] for n in graph.nodes)
    assert passes.eliminate_dead_code(graph) > 0
    with pytest.raises(GraphBreak, match="tolist"):
        trace(lambda t: t.tolist(), torch.ones(2))


def test_guards_see_every_hyperparameter_requires_grad_hooks_and_state():
    model, opt, step = make(optim.SGD, lr=0.1)
    compiled = torch.compile(step)
    for _ in range(3):
        compiled(*batch())
    opt.param_groups[0]["weight_decay"] = 1e-3  # compared with the others as one tuple
    compiled(*batch())
    assert compiled.recompile_reasons[-1] == "opt.param_groups[0].weight_decay: 0 -> 0.001"
    model[0].bias.requires_grad_(False)
    compiled(*batch())
    assert compiled.recompile_reasons[-1] == ("model.0.bias: tensor shape (16,) float32 requires_grad -> "
                                              "tensor shape (16,) float32")
    seen = []
    model[2].weight.register_hook(lambda g: seen.append(1))
    compiled(*batch())
    assert seen == [1] and "a hook on model.2.weight runs Python" in compiled.graph_breaks[-1]


def test_optimizer_state_cleared_recompiles_and_matches_eager():
    eager_model, eager_opt, eager_step = make(optim.Adam, lr=1e-2)
    model, opt, step = make(optim.Adam, lr=1e-2)
    compiled = torch.compile(step)
    for i in range(6):
        if i == 3:  # the guard reads the state's size: an emptied state is not the traced one
            opt.state.clear()
            eager_opt.state.clear()
        assert compiled(*batch(seed=i)).item() == eager_step(*batch(seed=i)).item()
    # traced again when the state is emptied, and once more when Adam makes new state dicts
    assert compiled.compile_count == 4 and compiled.eager_calls == 0
    for p, q in zip(eager_model.parameters(), model.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_expand_scalars_is_bitwise_and_shares_one_constant():
    def f(x):
        return torch.relu(x) + torch.relu(x * 2)

    compiled = torch.compile(f)
    rng = np.random.default_rng(0)
    for i in range(3):
        a = rng.standard_normal((32, 64), dtype=np.float32)
        a.flat[:6] = [-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf]
        x = torch.from_numpy(a)
        np.testing.assert_array_equal(compiled(x).numpy().view(np.int32), f(x).numpy().view(np.int32))
    constants = [n for n in compiled.graph.nodes if n.op == "constant" and n.name.startswith("zeros")]
    assert len(constants) == 1 and compiled.code.count(f", {constants[0].name}") == 2
    small = torch.compile(f)
    small(torch.ones(4))  # below BUFFER_MIN_BYTES the scalar stays
    assert "np.maximum(x, 0)" in small.code


def test_simplify_drops_double_transposes_and_folds_ones_like():
    from chibigrad.compile.graph import Graph
    g = Graph()
    a = g.placeholder("a", np.ones((2, 3)))
    t = g.call(None, ".T", (a,), {}, a.value.T, "forward")
    tt = g.call(None, ".T", (t,), {}, a.value, "forward")
    ones = g.call(np.ones_like, "np.ones_like", (tt,), {}, np.ones((2, 3)), "backward")
    out = g.call(np.add, "np.add", (tt, ones), {}, a.value + 1, "backward")
    g.output([out])
    assert passes.simplify(g) == 2
    passes.eliminate_dead_code(g)
    assert out.args[0] is a and ones.op == "constant" and t not in g.nodes and tt not in g.nodes
    source, globals_ = g.python_code("f")
    exec(source, globals_)  # noqa: S102 - the code the graph generated
    np.testing.assert_array_equal(globals_["f"](np.arange(6.0).reshape(2, 3))[0], np.arange(6.0).reshape(2, 3) + 1)


def test_a_folded_constant_never_reaches_the_caller():
    w = torch.tensor(2.0, requires_grad=True)

    def step():
        w.grad = None
        w.backward()  # the gradient is the one backward starts from, np.ones_like(w)

    compiled = torch.compile(step)
    for _ in range(4):
        compiled()
        assert w.grad.item() == 1.0
        w.grad.add_(100.0)  # the caller writes into the gradient it got


CFG = {"scale": 2.0}


class Counter:
    n = 0


def test_the_issues_programs_print_what_eager_prints():
    def g(t):
        return t * CFG["scale"]

    cg = torch.compile(g)
    for _ in range(3):
        cg(torch.ones(2))
    CFG["scale"] = 3.0
    assert cg(torch.ones(2)).tolist() == [3.0, 3.0]
    assert cg.recompile_reasons == ["CFG['scale']: 2.0 -> 3.0"]
    CFG["scale"] = 2.0

    c = Counter()

    def k(t):
        c.n += 1
        return t * c.n

    ck = torch.compile(k)
    assert [ck(torch.ones(1)).item() for _ in range(4)] == [1, 2, 3, 4] and c.n == 4
    assert ck.graph_breaks[0] == "the step changes Python state: c.n (absent -> 1); side effects are not replayed"
    report = explain(ck)
    assert report.graph_count == 0 and report.eager_calls == 2  # traced twice (changed state twice), then eager
    assert "Break Reason 2: the step changes Python state: c.n (1 -> 2)" in repr(report)


def test_guards_read_attributes_closures_globals_and_modules_again():
    import types
    settings = types.ModuleType("settings")  # a module of the user's, as `import settings` gives
    settings.shift = 1.0
    settings.table = collections.OrderedDict(bias=0.0)
    box = Counter()
    box.factor = 2
    scale = [0.5]

    def f(t):
        return (t * box.factor + settings.shift + settings.table["bias"]) * scale[0] * Counter.n

    compiled = torch.compile(f)
    Counter.n = 1
    try:
        expected = []
        for change in (lambda: None, lambda: setattr(box, "factor", 2.0), lambda: setattr(settings, "shift", -0.0),
                       lambda: scale.__setitem__(0, 4.0), lambda: setattr(Counter, "n", 3),
                       lambda: settings.table.__setitem__("bias", 0.25)):
            change()
            expected.append(f(torch.ones(2)).numpy().tobytes())
            assert compiled(torch.ones(2)).numpy().tobytes() == expected[-1]
        assert compiled.compile_count == 6 and compiled.recompile_reasons[1] == "settings.shift: 1.0 -> -0.0"
    finally:
        Counter.n = 0


def test_python_side_effects_run_eagerly_and_a_lazy_initialisation_compiles():
    log = []

    def logs(t):
        y = (t * 2).sum()
        log.append(y.item())
        return y

    compiled = torch.compile(logs)
    for _ in range(3):
        compiled(torch.ones(2))
    assert log == [4.0, 4.0, 4.0] and type(log[0]) is float  # a number, not a value of the trace
    assert "log[0] (absent -> 4.0)" in compiled.graph_breaks[0]

    state = Counter()

    def lazy(t):
        if not hasattr(state, "ready"):
            state.ready = True
        return t * 2

    compiled = torch.compile(lazy)
    for _ in range(3):
        compiled(torch.ones(2))
    assert compiled.compile_count == 2 and compiled.eager_calls == 0 and len(compiled.graph_breaks) == 1


def test_what_the_guards_cannot_see_is_a_graph_break():
    import functools
    import random

    def mul(t, k):
        return t * k

    partial = functools.partial(mul, k=3)
    assert "the step calls mul" in _breaks(lambda t: partial(t), torch.ones(2))
    numbers = iter([1.0, 2.0, 3.0])
    assert "next() reads an iterator's position" in _breaks(lambda t: t * next(numbers), torch.ones(2))
    assert "global random numbers" in _breaks(lambda t: t * random.random(), torch.ones(2))
    rng = np.random.default_rng(0)
    assert "rng position" in _breaks(lambda t: t * rng.random(), torch.ones(2))
    assert "torch.manual_seed() inside the step" in _breaks(lambda t: torch.manual_seed(1) and t * 2, torch.ones(2))


def test_global_settings_are_guarded():
    f = torch.compile(lambda: torch.ones(2) * 1.5)
    f()
    torch.set_default_dtype(torch.float64)
    try:
        assert f().dtype == torch.float64
    finally:
        torch.set_default_dtype(torch.float32)
    assert f.recompile_reasons == ["default dtype: torch.float32 -> torch.float64"]


def test_a_long_list_of_numbers_is_guarded_in_one_comparison():
    data = [float(i) for i in range(100)]
    f = torch.compile(lambda t: t * data[3])
    f(torch.ones(2))
    data[3] = 7.0
    assert f(torch.ones(2)).tolist() == [7.0, 7.0]
    assert f.recompile_reasons[0].startswith("data: '100 items, crc") and f.guards.count("return None") < 10


def test_another_thread_reading_the_clock_is_not_the_steps_doing():
    """The audit watches time's clocks for the whole process while tracing; a Jupyter kernel's
    own threads read them all the time, and that must not turn the step into a graph break."""
    import threading
    import time
    stop = threading.Event()
    reader = threading.Thread(target=lambda: [time.monotonic() for _ in iter(stop.is_set, True)], daemon=True)
    reader.start()
    w = torch.ones(4)

    def chain(x):
        for _ in range(200):
            x = x * w + 1
        return x

    compiled = torch.compile(chain)
    try:
        for _ in range(2):
            compiled(torch.ones(4))
    finally:
        stop.set()
    assert compiled.graph_breaks == [] and compiled.eager_calls == 0
    clocked = torch.compile(lambda x: x * time.perf_counter())
    clocked(torch.ones(1))
    assert "reads the clock" in clocked.graph_breaks[0]
