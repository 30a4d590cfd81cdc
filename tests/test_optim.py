"""chibigrad.optim and gradient clipping against PyTorch's recorded numbers
(tests/fixtures/nn_goldens.json, made by scripts/record_nn_goldens.py), plus optimizer mechanics."""

import numpy as np
import pytest

import chibigrad as torch
import chibigrad.nn as nn
from chibigrad import optim
from test_nn import GOLDENS, assert_same_outcome

NAMESPACE = dict(torch=torch, nn=nn, optim=optim)
TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-10, atol=1e-12)}


def det(shape, k=0, scale=1.0):
    """The recording script's inputs: sin(0.731 i + k) * scale."""
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.731 + k) * scale).reshape(shape)


def optim_problem(dtype):
    W = torch.tensor(det((3, 4), 1, 0.5), dtype=dtype, requires_grad=True)
    b = torch.tensor(det((3,), 2, 0.5), dtype=dtype, requires_grad=True)
    X = torch.tensor(det((5, 4), 3), dtype=dtype)
    Y = torch.tensor(det((5, 3), 4), dtype=dtype)
    return [W, b], X, Y


@pytest.mark.parametrize("case", GOLDENS["optim"], ids=lambda c: f"{c['name']}-{c['dtype']}")
def test_optimizer_steps_match_torch(case):
    dtype = getattr(torch, case["dtype"])
    params, X, Y = optim_problem(dtype)
    opt = eval(case["ctor"], dict(NAMESPACE, params=params))
    sched = eval(case["sched"], dict(NAMESPACE, opt=opt)) if case["sched"] else None
    tol = TOL[case["dtype"]]
    for step, expected in enumerate(case["params"]):
        opt.zero_grad()
        loss = ((X @ params[0].T + params[1] - Y) ** 2).mean()
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
            assert sched.get_last_lr() == pytest.approx(case["lrs"][step], rel=1e-12)
        np.testing.assert_allclose(loss.item(), case["losses"][step], **tol)
        for p, values in zip(params, expected):
            np.testing.assert_allclose(p.detach().numpy(), values, **tol)
    for i, p in enumerate(params):
        state = opt.state[p]
        assert state.keys() == case["state"][str(i)].keys()
        for key, value in case["state"][str(i)].items():
            np.testing.assert_allclose(np.asarray(state[key].tolist()), value, **tol)


@pytest.mark.parametrize("case", GOLDENS["clip"], ids=lambda c: f"{c['name']}-{c['dtype']}")
def test_clipping_matches_torch(case):
    dtype = getattr(torch, case["dtype"])
    params = [torch.zeros(3, 4, dtype=dtype, requires_grad=True), torch.zeros(3, dtype=dtype, requires_grad=True),
              torch.zeros(2, dtype=dtype, requires_grad=True)]
    for p, grad in zip(params, case["grads_before"]):
        p.grad = torch.tensor(grad, dtype=dtype)
    result = eval(case["call"], dict(NAMESPACE, params=params))
    tol = TOL[case["dtype"]]
    if case["result"] is None:
        assert result is None
    else:
        np.testing.assert_allclose(result.item(), case["result"], **tol)
        assert str(result.dtype) == case["result_dtype"]
    for p, expected in zip(params, case["grads_after"]):
        np.testing.assert_allclose(p.grad.numpy(), expected, **tol)
    assert params[2].grad is None


OPTIM_ERRORS = [e for e in GOLDENS["errors"] if "optim." in e["code"] or "clip_grad" in e["code"]]


@pytest.mark.parametrize("case", OPTIM_ERRORS, ids=lambda c: c["code"][:60])
def test_error_matches_torch(case):
    assert_same_outcome(case)


# ---- mechanics ----------------------------------------------------------------------------
def train(opt, params, X, Y, steps):
    for _ in range(steps):
        opt.zero_grad()
        ((X @ params[0].T + params[1] - Y) ** 2).mean().backward()
        opt.step()


@pytest.mark.parametrize("make", [lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
                                  lambda p: optim.Adam(p, lr=0.05, amsgrad=True),
                                  lambda p: optim.AdamW(p, lr=0.05),
                                  lambda p: optim.RMSprop(p, lr=0.01, momentum=0.5, centered=True),
                                  lambda p: optim.Adagrad(p, lr=0.1, lr_decay=0.01)],
                         ids=["sgd", "adam", "adamw", "rmsprop", "adagrad"])
def test_state_dict_resumes_exactly(make):
    params, X, Y = optim_problem(torch.float64)
    opt = make(params)
    train(opt, params, X, Y, 3)
    saved = opt.state_dict()
    assert saved["param_groups"][0]["params"] == [0, 1]
    copies = [p.detach().clone().requires_grad_() for p in params]
    resumed = make(copies)
    resumed.load_state_dict(saved)
    train(opt, params, X, Y, 3)
    train(resumed, copies, X, Y, 3)
    for a, b in zip(params, copies):
        assert torch.equal(a, b)
    buffers = [v for s in resumed.state.values() for v in s.values() if isinstance(v, torch.Tensor)]
    originals = [v for s in opt.state.values() for v in s.values() if isinstance(v, torch.Tensor)]
    assert not any(a is b for a in buffers for b in originals)  # loading copies the state


def test_load_state_dict_checks_groups():
    p = torch.zeros(2, requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        opt.load_state_dict({"state": {}, "param_groups": [{"lr": 0.1, "params": [0, 1]}]})


def test_zero_grad_and_param_groups():
    a, b = torch.ones(2, requires_grad=True), torch.ones(3, requires_grad=True)
    opt = optim.SGD([a], lr=0.1)
    opt.add_param_group({"params": b, "lr": 0.5})
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0  # filled from the defaults
    (a.sum() + b.sum()).backward()
    opt.step()
    assert a.tolist() == pytest.approx([0.9, 0.9]) and b.tolist() == pytest.approx([0.5, 0.5, 0.5])
    opt.zero_grad(set_to_none=False)
    assert a.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert a.grad is None and b.grad is None


def test_step_skips_parameters_without_grad_and_runs_a_closure():
    a, b = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    opt = optim.Adam([a, b], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 2.0
    assert b.tolist() == [1.0, 1.0] and b not in opt.state
    assert a.tolist() == pytest.approx([0.9, 0.9])


def test_step_is_an_inplace_change_that_saved_tensors_notice():
    w = torch.ones(2, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    loss = (w * w).sum()  # saves w
    opt.step()  # changes w in place
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_repr_lists_the_hyper_parameters():
    opt = optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    assert repr(opt) == ("SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n    foreach: None\n"
                         "    fused: None\n    lr: 0.1\n    maximize: False\n    momentum: 0\n    nesterov: False\n"
                         "    weight_decay: 0\n)")


@pytest.mark.parametrize("make", [optim.SGD, optim.Adam, optim.AdamW])
def test_a_differentiable_step_is_refused_not_ignored(make):
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        make([torch.zeros(1, requires_grad=True)], lr=0.1, differentiable=True)


def test_step_lr_schedule_and_state_dict():
    opt = optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    sched = optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.1)
    lrs = []
    for _ in range(7):
        lrs.append(sched.get_last_lr()[0])
        opt.step()
        sched.step()
    assert lrs == pytest.approx([1, 1, 1, 0.1, 0.1, 0.1, 0.01])
    state = sched.state_dict()
    assert state["last_epoch"] == 7 and "optimizer" not in state


def test_clip_grad_norm_with_no_gradients_returns_zero():
    total = nn.utils.clip_grad_norm_([torch.zeros(2, requires_grad=True)], 1.0)
    assert total.item() == 0.0 and total.dtype is torch.float32


def test_plain_sgd_keeps_no_state_and_momentum_sgd_does():
    """PyTorch 2.13's state_dict: {} for SGD without momentum, one entry per parameter with it."""
    for momentum, expected in ((0, {}), (0.9, {0, 1})):
        model = nn.Linear(2, 1)
        opt = optim.SGD(model.parameters(), lr=0.1, momentum=momentum)
        model(torch.ones(1, 2)).sum().backward()
        opt.step()
        state = opt.state_dict()["state"]
        assert (state if not expected else set(state)) == expected


def test_zero_grad_keeping_a_grad_that_is_a_view_zeroes_it_in_place():
    p = torch.zeros(2, requires_grad=True)
    storage = torch.ones(4)
    p.grad = storage[:2]  # a view: detach_() would refuse it, as PyTorch's zero_grad knows
    optim.SGD([p], lr=0.1).zero_grad(set_to_none=False)
    assert p.grad.tolist() == [0.0, 0.0] and storage.tolist() == [0.0, 0.0, 1.0, 1.0]


# ---- issue 16: RMSprop, Adagrad, fused multiply-add ------------------------------------------------
def rmsprop_reference(params, grads_of, steps, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                      centered=False, maximize=False):
    """The algorithm box of PyTorch's RMSprop documentation, in float64 numpy."""
    params = [p.copy() for p in params]
    v = [np.zeros_like(p) for p in params]
    b = [np.zeros_like(p) for p in params]
    g_avg = [np.zeros_like(p) for p in params]
    for _ in range(steps):
        for i, g in enumerate(grads_of(params)):
            g = -g if maximize else g
            g = g + weight_decay * params[i]
            v[i] = alpha * v[i] + (1 - alpha) * g * g
            vt = v[i]
            if centered:
                g_avg[i] = alpha * g_avg[i] + (1 - alpha) * g
                vt = vt - g_avg[i] ** 2
            if momentum > 0:
                b[i] = momentum * b[i] + g / (np.sqrt(vt) + eps)
                params[i] = params[i] - lr * b[i]
            else:
                params[i] = params[i] - lr * g / (np.sqrt(vt) + eps)
    return params


def adagrad_reference(params, grads_of, steps, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                      eps=1e-10, maximize=False):
    """The algorithm box of PyTorch's Adagrad documentation, in float64 numpy."""
    params = [p.copy() for p in params]
    total = [np.full_like(p, initial_accumulator_value) for p in params]
    for t in range(1, steps + 1):
        for i, g in enumerate(grads_of(params)):
            g = -g if maximize else g
            clr = lr / (1 + (t - 1) * lr_decay)
            g = g + weight_decay * params[i]
            total[i] = total[i] + g * g
            params[i] = params[i] - clr * g / (np.sqrt(total[i]) + eps)
    return params


@pytest.mark.parametrize("kind,options", [
    ("rmsprop", {}), ("rmsprop", dict(lr=0.05, centered=True)), ("rmsprop", dict(momentum=0.9, weight_decay=0.1)),
    ("rmsprop", dict(lr=0.1, alpha=0.5, centered=True, momentum=0.5, maximize=True)),
    ("adagrad", {}), ("adagrad", dict(lr=0.5, lr_decay=0.1, weight_decay=0.05)),
    ("adagrad", dict(initial_accumulator_value=0.3, maximize=True))])
def test_rmsprop_and_adagrad_follow_the_documented_algorithm(kind, options):
    params, X, Y = optim_problem(torch.float64)
    Xa, Ya = X.numpy(), Y.numpy()

    def grads_of(arrays):
        W, b = arrays
        r = 2 * (Xa @ W.T + b - Ya) / Ya.size
        return [r.T @ Xa, r.sum(0)]

    reference = (rmsprop_reference if kind == "rmsprop" else adagrad_reference)(
        [p.detach().numpy() for p in params], grads_of, 5, **options)
    opt = (optim.RMSprop if kind == "rmsprop" else optim.Adagrad)(params, **options)
    train(opt, params, X, Y, 5)
    for p, expected in zip(params, reference):
        np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-12, atol=1e-14)


def test_adagrad_state_exists_before_the_first_step_and_for_groups_added_later():
    a = torch.ones(2, requires_grad=True)
    opt = optim.Adagrad([a], initial_accumulator_value=0.5)
    assert opt.state[a]["step"].item() == 0 and opt.state[a]["sum"].tolist() == [0.5, 0.5]
    b = torch.ones(1, requires_grad=True)
    opt.add_param_group({"params": [b]})
    assert b not in opt.state
    (a.sum() + b.sum()).backward()
    opt.step()
    assert opt.state[b]["step"].item() == 1 and opt.state[b]["sum"].tolist() == [1.5]


def test_fused_multiply_add_rounds_once():
    """float32 a * b + c equals the exactly rounded result, which plain numpy misses for many elements."""
    from fractions import Fraction

    from chibigrad.optim.optimizer import fused_multiply_add
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(200).astype(np.float32) for _ in range(3))
    fused = fused_multiply_add(a, b, c)
    exact = [np.float32(float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))) for x, y, z in zip(a, b, c)]
    assert fused.dtype == np.float32 and np.array_equal(fused, np.array(exact, dtype=np.float32))
    assert not np.array_equal(a * b + c, fused)


def test_dir_of_optim_lists_what_torch_optim_lists():
    """dir(torch.optim) shows optimizers and lr_scheduler, not chibigrad's machinery or module files."""
    names = set(dir(torch.optim))
    assert {"Adamax", "NAdam", "RAdam", "Adadelta", "Rprop", "ASGD", "lr_scheduler"} <= names
    assert not names & {"_missing", "__getattr__", "__dir__", "adam", "sgd", "optimizer"}
    assert "_missing" not in dir(torch) and "__getattr__" not in dir(torch.nn)
    with pytest.raises(AttributeError, match="chibigrad does not implement torch.optim.SparseAdam"):
        torch.optim.SparseAdam
    with pytest.raises(AttributeError, match="chibigrad does not implement torch.optim.lr_scheduler.CyclicLR"):
        torch.optim.lr_scheduler.CyclicLR
    assert "__getattr__" not in dir(torch.optim.lr_scheduler) and not hasattr(torch.optim.lr_scheduler, "SequentialLR")


def test_lbfgs_minimises_a_quadratic_with_a_closure_and_refuses_a_line_search():
    a = torch.tensor([[3.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 1.0]], dtype=torch.float64)
    b = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    x = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([x], max_iter=50)
    calls = []

    def closure():
        opt.zero_grad()
        loss = 0.5 * x @ a @ x - b @ x
        loss.backward()
        calls.append(loss.item())
        return loss

    first = opt.step(closure)
    assert first.item() == 0.0 and len(calls) > 3
    np.testing.assert_allclose(x.detach().numpy(), np.linalg.solve(a.numpy(), b.numpy()), rtol=1e-4)
    with pytest.raises(NotImplementedError, match="strong_wolfe"):
        torch.optim.LBFGS([x], line_search_fn="strong_wolfe")
