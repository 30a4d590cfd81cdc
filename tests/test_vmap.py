"""torch.func.vmap: every op of tests/test_ops.py's table vmapped equals the loop over the samples
(values and per-sample gradients, the batch at several dims), the fallback for an op without a batching
rule, composition with grad, jvp, jacrev and jacfwd, and what vmap leaves behind (nothing).
PyTorch's error texts are checked by the golden program tests/golden/programs/vmap_errors.py."""
import json
from pathlib import Path

import numpy as np
import pytest

import chibigrad as torch
from chibigrad import batching, batching_rules, func
from chibigrad.autograd import engine, transforms
from tests.test_ops import OPS

BATCH = 3
DATA_DEPENDENT = {"index_bool"}  # a mask's result size depends on the values: PyTorch refuses under vmap


def batch_of(array, seed):
    """``BATCH`` samples near ``array`` (so domains such as positive-only stay valid)."""
    rng = np.random.default_rng(seed)
    return np.stack([array * rng.uniform(0.9, 1.1, array.shape) for _ in range(BATCH)])


def cases(name):
    """(in_dims, tensors): every input batched at dim 0; only the first batched; the batch as the last dim."""
    fn, _, inputs = OPS[name]
    batched = [batch_of(a, i) for i, a in enumerate(inputs)]
    yield [0] * len(inputs), [torch.tensor(b) for b in batched]
    if len(inputs) > 1:
        yield [0] + [None] * (len(inputs) - 1), [torch.tensor(batched[0])] + [torch.tensor(a) for a in inputs[1:]]
    yield [-1] * len(inputs), [torch.tensor(np.moveaxis(b, 0, -1)) for b in batched]


def select(t, d, b):
    """Sample ``b`` of ``t``, whose batch is dim ``d`` (None: not batched)."""
    return t if d is None else t[(slice(None),) * (d % t.ndim) + (b,)]


@pytest.mark.parametrize("name", sorted(set(OPS) - DATA_DEPENDENT))
def test_vmap_of_every_op_equals_the_loop(name, recwarn):
    fn = OPS[name][0]
    for dims, tensors in cases(name):
        expected = torch.stack([fn(*[select(t, d, b) for t, d in zip(tensors, dims)]) for b in range(BATCH)])
        got = func.vmap(fn, in_dims=tuple(dims))(*tensors)
        assert got.shape == expected.shape, (name, dims)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12, err_msg=f"{name} {dims}")
    assert not [w for w in recwarn if "performance drop" in str(w.message)], "an op of the table fell back to a loop"


@pytest.mark.parametrize("name", sorted(set(OPS) - DATA_DEPENDENT))
def test_per_sample_gradients_of_every_op_equal_the_loop(name):
    """vmap(grad(f)): one backward pass for the batch, each sample's gradient its own."""
    fn = OPS[name][0]
    dims, tensors = next(cases(name))
    weights = torch.tensor(np.random.default_rng(1).uniform(0.5, 1.5, fn(*[t[0] for t in tensors]).shape))
    loss = lambda *xs: (fn(*xs) * weights).sum()  # noqa: E731
    argnums = tuple(range(len(tensors)))
    got = func.vmap(func.grad(loss, argnums=argnums))(*tensors)
    for i in argnums:
        expected = torch.stack([func.grad(loss, argnums=argnums)(*[t[b] for t in tensors])[i] for b in range(BATCH)])
        np.testing.assert_allclose(got[i].numpy(), expected.numpy(), rtol=1e-10, atol=1e-12, err_msg=name)


def test_indexing_with_a_batched_mask_is_refused_as_in_pytorch():
    with pytest.raises(RuntimeError, match="Attempting to batch over indexing with a boolean mask"):
        func.vmap(lambda a: a[a > 0])(torch.randn(2, 3))


def test_an_op_without_a_batching_rule_loops_and_warns_as_pytorch(monkeypatch):
    recorded = json.loads((Path(__file__).parent / "fixtures" / "vmap_messages.json").read_text())
    assert batching.FALLBACK_WARNING.format(recorded["op"]) == recorded["fallback_warning"]
    monkeypatch.delitem(batching_rules.rules, torch.ops.pointwise.Exp)
    x = torch.randn(4, 3)
    with pytest.warns(UserWarning) as caught:
        out = func.vmap(torch.exp)(x)
    assert [str(w.message) for w in caught] == [batching.FALLBACK_WARNING.format("aten::exp")]
    assert caught[0].filename == __file__  # pointing at the caller, as PyTorch's C++ warnings do
    np.testing.assert_array_equal(out.numpy(), torch.exp(x).numpy())


def test_a_rule_stubbed_in_the_student_edition_loops_silently(monkeypatch, recwarn):
    """Assignment 06c's rules raise "Exercise 06c...." in the student edition (autograder/build.py): their ops run
    once per sample there, without the fallback's warning (the other exercises and the book still run)."""
    def stub(op, args, batched, size):
        raise NotImplementedError("Exercise 06c.sum_rule: you write this in the notebook 06c_vmap/06c_vmap.ipynb.")
    monkeypatch.setitem(batching_rules.rules, torch.ops.reduction.SumDim, stub)
    x = torch.randn(4, 3, 5)
    np.testing.assert_allclose(func.vmap(lambda s: s.sum(-1), in_dims=1)(x).numpy(), x.sum(-1).T.numpy())
    assert not recwarn.list

    def broken(op, args, batched, size):
        raise NotImplementedError("a rule's own bug")
    monkeypatch.setitem(batching_rules.rules, torch.ops.reduction.SumDim, broken)
    with pytest.raises(NotImplementedError, match="a rule's own bug"):
        func.vmap(lambda s: s.sum(-1))(x)


def test_aten_names_follow_pytorch():
    assert batching.aten_name("IndexPutBackward0") == "aten::index_put"
    assert batching.aten_name("MmBackward0") == "aten::mm"
    assert batching.aten_name("NativeBatchNormBackward0") == "aten::native_batch_norm"


def test_in_dims_and_out_dims_move_the_batch():
    x = torch.randn(3, 4, 5)
    np.testing.assert_array_equal(func.vmap(torch.sum, in_dims=1)(x).numpy(), x.sum((0, 2)).numpy())
    out = func.vmap(lambda a: a * 2, in_dims=2, out_dims=1)(x)
    np.testing.assert_array_equal(out.numpy(), (x * 2).permute(0, 2, 1).numpy())
    a, b = func.vmap(lambda t: (t, t.sum()), out_dims=(1, 0))(x)
    assert a.shape == (4, 3, 5) and b.shape == (3,)


def test_nested_vmap_equals_a_double_loop():
    # float64: dot and matmul add in other orders, and float32 cancellation made this flaky at rtol 1e-6
    x, y = torch.randn(3, 4, dtype=torch.float64), torch.randn(5, 4, dtype=torch.float64)
    outer = func.vmap(func.vmap(torch.dot, in_dims=(None, 0)), in_dims=(0, None))(x, y)
    np.testing.assert_allclose(outer.numpy(), (x @ y.T).numpy(), rtol=1e-12)


def test_chunk_size_gives_the_same_result():
    x = torch.randn(7, 3)
    f = lambda a: a.softmax(0) * a.sum()  # noqa: E731
    np.testing.assert_array_equal(func.vmap(f, chunk_size=3)(x).numpy(), func.vmap(f)(x).numpy())


def test_randomness_same_and_different():
    x = torch.zeros(4, 3)
    same = func.vmap(lambda a: a + torch.zeros(3).normal_(), randomness="same")(x)
    assert (same == same[0]).all()
    different = func.vmap(lambda a: a.clone().normal_(), randomness="different")(x)
    assert not (different == different[0]).all()


def test_in_place_on_a_batched_tensor_equals_the_loop():
    x = torch.randn(4, 3)
    out = func.vmap(lambda a: a.clone().mul_(2).add_(1))(x)
    np.testing.assert_allclose(out.numpy(), (x * 2 + 1).numpy(), rtol=1e-6)


def test_vmap_leaves_nothing_open_even_when_f_raises():
    with pytest.raises(RuntimeError):
        func.vmap(lambda a: a.item())(torch.randn(2, 3))
    assert transforms.state.open == 0 and not batching.is_open()
    torch.randn(2)  # randomness='error' no longer applies


def test_per_sample_gradients_of_a_model_with_functional_call():
    model = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh(), torch.nn.Linear(4, 3))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = torch.randn(6, 5), torch.randint(0, 3, (6,))

    def loss(params, sample, target):
        return torch.nn.functional.cross_entropy(func.functional_call(model, params, (sample[None],)), target[None])

    got = func.vmap(func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
    for b in range(6):
        expected = func.grad(loss)(params, x[b], y[b])
        for k in params:
            np.testing.assert_allclose(got[k][b].numpy(), expected[k].numpy(), rtol=1e-5, atol=1e-6)


def test_a_captured_batched_tensor_still_gives_per_sample_gradients():
    w, xs = torch.randn(3), torch.randn(4, 3)
    got = func.vmap(lambda x: func.grad(lambda w: (w * x).sin().sum())(w))(xs)
    np.testing.assert_allclose(got.numpy(), (xs * (w * xs).cos()).numpy(), rtol=1e-6)


def test_vmap_of_jvp_equals_the_loop():
    xs, ts = torch.randn(4, 3), torch.randn(4, 3)
    f = lambda x: x.sin() * x.sum()  # noqa: E731
    values, tangents = func.vmap(lambda x, t: func.jvp(f, (x,), (t,)))(xs, ts)
    for b in range(4):
        v, t = func.jvp(f, (xs[b],), (ts[b],))
        np.testing.assert_allclose(values[b].numpy(), v.numpy(), rtol=1e-6)
        np.testing.assert_allclose(tangents[b].numpy(), t.numpy(), rtol=1e-5, atol=1e-6)


def jacobian_by_loop(f, x):
    """Row by row with autograd.grad, the way before vmap."""
    out = f(x)
    xp = x.detach().requires_grad_()
    y = f(xp).reshape(-1)
    return torch.stack([torch.autograd.grad(y[i], xp, retain_graph=True)[0] for i in range(y.numel())]).reshape(
        *out.shape, *x.shape)


def test_jacrev_and_jacfwd_are_one_batched_pass(monkeypatch):
    w = torch.randn(4, 3, dtype=torch.float64)
    f = lambda x: (w @ x).tanh() * x.sum()  # noqa: E731
    x = torch.randn(3, dtype=torch.float64)
    expected = jacobian_by_loop(f, x)
    calls = []
    real = engine.execute
    monkeypatch.setattr(engine, "execute", lambda *a, **k: calls.append(1) or real(*a, **k))
    np.testing.assert_allclose(func.jacrev(f)(x).numpy(), expected.numpy(), rtol=1e-12)
    assert len(calls) == 1  # one backward pass for the 4 rows
    np.testing.assert_allclose(func.jacfwd(f)(x).numpy(), expected.numpy(), rtol=1e-12)
    assert len(calls) == 1  # forward mode: none
    hessian = func.hessian(lambda x: f(x).sum())(x)
    np.testing.assert_allclose(hessian.numpy(), func.jacfwd(func.jacfwd(lambda x: f(x).sum()))(x).numpy(), rtol=1e-10)
    np.testing.assert_allclose(hessian.numpy(), func.jacrev(func.jacrev(lambda x: f(x).sum()))(x).numpy(), rtol=1e-10)


def test_per_sample_jacobians_and_hessians():
    w = torch.randn(4, 3, dtype=torch.float64)
    f = lambda x: (w @ x).tanh()  # noqa: E731
    xs = torch.randn(5, 3, dtype=torch.float64)
    jacobians = func.vmap(func.jacrev(f))(xs)
    hessians = func.vmap(func.hessian(f))(xs)
    for b in range(5):
        np.testing.assert_allclose(jacobians[b].numpy(), func.jacrev(f)(xs[b]).numpy(), rtol=1e-12)
        np.testing.assert_allclose(hessians[b].numpy(), func.hessian(f)(xs[b]).numpy(), rtol=1e-10, atol=1e-14)


def test_stack_module_state_stacks_leaves_for_an_ensemble():
    models = [torch.nn.Linear(3, 2) for _ in range(4)]
    params, buffers = func.stack_module_state(models)
    assert params["weight"].shape == (4, 2, 3) and params["weight"].is_leaf and params["weight"].requires_grad
    assert buffers == {}
    x = torch.randn(5, 3)
    out = func.vmap(lambda p: func.functional_call(models[0], p, (x,)))(params)
    for m, model in enumerate(models):
        np.testing.assert_allclose(out[m].detach().numpy(), model(x).detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("fn", [
    lambda a: a > 0.1, lambda a: torch.isnan(a), lambda a: torch.isclose(a, a * 0 + 0.5, atol=0.3),
    lambda a: torch.argmax(a), lambda a: a.argmin(1), lambda a: torch.all(a > -1), lambda a: (a > 0).any(0)])
def test_ops_outside_autograd_are_batched_too(fn):
    """Comparisons, tests and argmax-like reductions are Functions too, so torch.f(x) and x.f() both meet vmap."""
    x = torch.randn(4, 2, 3)
    np.testing.assert_array_equal(func.vmap(fn)(x).numpy(), torch.stack([fn(x[b]) for b in range(4)]).numpy())


def test_jacobians_with_respect_to_a_layers_bias():
    """addmm with only the bias batched (jacfwd's tangents): the rule lines the bias up with the product."""
    layer, inputs = torch.nn.Linear(3, 2), torch.randn(4, 3)
    out_of_bias = lambda b: func.functional_call(layer, {"bias": b}, (inputs,))  # noqa: E731
    bias = layer.bias.detach()
    np.testing.assert_allclose(func.jacfwd(out_of_bias)(bias).detach().numpy(),
                               func.jacrev(out_of_bias)(bias).detach().numpy(), rtol=1e-6)


def test_an_array_of_a_temporary_batched_tensor_is_still_batched():
    """torch.where hands the op its condition's array; the condition itself (a temporary) is gone by then."""
    x = torch.randn(5, 4, 6)
    got = func.vmap(lambda a: torch.where(a > 0, a, torch.zeros(6)))(x)
    np.testing.assert_array_equal(got.numpy(), torch.where(x > 0, x, torch.zeros(6)).numpy())


def test_the_fallback_stacks_each_output_of_an_op_with_several(monkeypatch):
    monkeypatch.delitem(batching_rules.rules, torch.ops.shape.Split)
    x = torch.randn(3, 5)
    with pytest.warns(UserWarning, match="aten::split"):
        pieces = func.vmap(lambda a: a.split(2))(x)
    assert [p.shape for p in pieces] == [(3, 2), (3, 2), (3, 1)]
    np.testing.assert_array_equal(pieces[1].numpy(), x[:, 2:4].numpy())


@pytest.mark.parametrize("fn", [lambda a: a[[0, 2], :, 1], lambda a: a[:, [0, 2], 1], lambda a: a[1, 2:, None, 0],
                                lambda a: a[..., torch.tensor([3, 0])]])
def test_indexing_keeps_the_batch_where_numpy_would_move_it(fn):
    """Index arrays separated by a slice put their dims first in numpy: such keys run sample by sample."""
    x = torch.randn(3, 4, 5, 6)
    np.testing.assert_array_equal(func.vmap(fn)(x).numpy(), torch.stack([fn(x[b]) for b in range(3)]).numpy())
