"""Hidden checks of 08_debugging (fixed training code and a gradient-norm logger), run by the judge.

Models and data are seeded (``cases.model_08``, ``cases.data_08``) and built on both sides; attention and the
two-layer network get written-out arrays. The student's function runs in the student process; what comes back
is data: the losses and parameters after training with the saved bytes measured around it, forward values and
the gradients backward left, what each logger logged at each step. The judge's answers come from numpy and
from chibigrad's own engine on its own copies.
"""
import numpy as np

import chibigrad as torch
from chibigrad import memory

from .. import cases
from ..judge import exercise, expect, expect_array


def _expect_tensor(got, what):
    expect(got["type"] == "Tensor", f"{what}: expected a Tensor, got {got['type']}")


# ---- Exercise 1: train ---------------------------------------------------------------------------------------------

TRAIN_CASES = ((0, 1, 0.1, 8, 4), (1, 5, 0.05, 16, 16), (2, 25, 0.1, 32, 8), (3, 12, 0.2, 5, 32))


def _reference_training(seed, n, width, steps, lr):
    """Plain gradient descent by hand (autograd.grad, numpy updates): the losses, the peak of saved bytes one
    step needs and the parameters after training."""
    model, (inputs, targets) = cases.model_08(seed, width), cases.data_08(n, seed)
    history, peak = [], 0
    for _ in range(steps):
        memory.reset_peak()
        start = memory.saved()
        loss = (model(inputs) - targets).pow(2).mean()
        grads = torch.autograd.grad(loss, list(model.parameters()))
        peak = max(peak, memory.max_saved() - start)
        for p, g in zip(model.parameters(), grads):
            p._array -= lr * g._array
        history.append(float(loss._array))
    return history, peak, [p.detach().numpy() for p in model.parameters()]


@exercise("08_debugging:train")
def train(student):
    for seed, steps, lr, n, width in TRAIN_CASES:
        what = f"train(model of width {width}, {n} examples, steps={steps}, lr={lr})"
        got = student.call("train", {"recipe": "case_08", "seed": seed, "steps": steps, "lr": lr, "n": n,
                                     "width": width}, observe="train_08", what=what, timeout=30)
        expected, step_peak, params = _reference_training(seed, n, width, steps, lr)
        length = f" of length {got['length']}" if got["type"] == "list" else ""
        expect(got["type"] == "list" and got["length"] == steps,
               f"{what}: expected a list of {steps} losses, got a {got['type']}{length}")
        expect(got["types"] == ["float"], f"{what}: history holds {', '.join(got['types'])} values; append "
                                          "loss.item() (a Python float): a loss tensor keeps its whole graph alive")
        expect(got["left"] == 0, f"{what}: after training, {got['left']} bytes of saved tensors are still alive (a "
                                 "graph kept with retain_graph=True, or by a loss tensor you kept)")
        for k, (p, e) in enumerate(zip(got["params"], params)):
            expect_array(p, e, f"{what}: parameter {k} after training (each step must use its own gradient only: "
                               "zero the gradients before backward)", tol=1e-9)
        expect_array(np.array(got["history"], dtype=np.float64), expected, f"{what}: the losses in history", tol=1e-9)
        expect(got["peak"] <= step_peak,
               f"{what}: at its peak training held {got['peak']} bytes of saved tensors, but one step needs "
               f"{step_peak}: a step's graph is still alive while the next one is built (retain_graph=True keeps the "
               "saved tensors until the loss tensor goes away)")
        expect(got["peak"] > 0, f"{what}: no saved tensor was counted during training; each step's loss must be "
                                "computed through the model and backward called on it (with chibigrad's own "
                                "memory counters in place)")


# ---- Exercise 2: attention_weights -----------------------------------------------------------------------------------

# (n, d, m, scale of q); the last has scores in the thousands: exp overflows without the max shift (issue 22)
ATTENTION_CASES = ((3, 4, 5, 1.0), (1, 8, 1, 1.0), (6, 2, 3, 1.0), (4, 3, 4, 60.0), (2, 16, 7, 0.1),
                   (3, 4, 5, 1000.0))


def _softmax_rows(s):
    e = np.exp(s - s.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def _attention_case(student, what, qa, ka, upstream, k_grad=True):
    """attention_weights(q, k), then backward of (w * upstream).sum(): forward and both gradients checked."""
    got = student.call("attention_weights", {"recipe": "case_08", "q": qa, "k": ka, "k_grad": k_grad,
                                             "upstream": upstream}, observe="attention_08", what=what)
    d = qa.shape[1]
    expected = _softmax_rows(qa @ ka.T / np.sqrt(d))
    _expect_tensor(got, what)
    expect_array(got["value"], expected, f"{what}: forward", tol=1e-9)
    expect(got["backward"] is None, f"backward of {what} raised {got['backward']}")
    dscores = expected * (upstream - (upstream * expected).sum(1, keepdims=True)) / np.sqrt(d)
    for name, want in [("q", dscores @ ka), ("k", dscores.T @ qa)][:2 if k_grad else 1]:
        expect(got[name] is not None, f"{what}: {name} got no gradient; the normalisation must stay in the graph "
                                      "(detach() cuts it)")
        expect_array(got[name], want, f"{what}: {name}.grad (an in-place change through .data or under no_grad is "
                                      "invisible to backward, which then differentiates something else)", tol=1e-8)


@exercise("08_debugging:attention")
def attention(student):
    rng = np.random.default_rng(20)
    for n, d, m, scale in ATTENTION_CASES:
        what = f"attention_weights(q of shape {(n, d)}, k of shape {(m, d)}{', large scores' if scale > 10 else ''})"
        qa, ka = rng.standard_normal((n, d)) * scale, rng.standard_normal((m, d))
        _attention_case(student, what, qa, ka, rng.standard_normal((n, m)))
    qa, ka = rng.standard_normal((2, 3)), rng.standard_normal((4, 3))
    first_column = np.zeros((2, 4))
    first_column[:, 0] = 1.0  # backward of w[:, 0].sum()
    _attention_case(student, "attention_weights with keys that need no gradient", qa, ka, first_column, k_grad=False)


# ---- Exercise 3: td_loss ---------------------------------------------------------------------------------------------

TD_CASES = ((30, 8, 0.9, 16), (31, 1, 0.5, 4), (32, 20, 0.99, 8), (33, 6, 0.0, 16))  # (seed, n, gamma, width)


@exercise("08_debugging:td_loss")
def td_loss(student):
    for seed, n, gamma, width in TD_CASES:
        recipe = {"recipe": "case_08", "seed": seed, "n": n, "gamma": gamma, "width": width}
        what = f"td_loss({n} transitions, gamma={gamma})"
        got = student.call("td_loss", recipe, observe="td_loss_08", what=what)
        expect(got["requires_grad"], f"{what}: expected a loss tensor that requires grad, got a {got['type']}"
                                     f"{' that does not require grad' if got['type'] == 'Tensor' else ''}")
        q_net, states, rewards, next_states = cases.td_case_08(recipe)
        params = list(q_net.parameters())
        with torch.no_grad():
            target = rewards + gamma * q_net(next_states)
            predicted = q_net(states)
        expect_array(got["value"], ((predicted - target) ** 2).mean().numpy(), f"{what}: the loss", tol=1e-10)
        expected = torch.autograd.grad((q_net(states) - target).pow(2).mean(), params)
        for k, (g, e) in enumerate(zip(got["grads"], expected)):
            expect(g is not None, f"{what}: parameter {k} got no gradient: the prediction q_net(states) must stay "
                                  "in the graph")
            expect_array(g, e.numpy(), f"{what}: gradient of parameter {k} (it must come from q_net(states) only; "
                                       "the target is a constant)", tol=1e-9)


# ---- Exercise 4: two_layer -------------------------------------------------------------------------------------------

RELU_CASES = ((6, 3, 4, 2, False), (1, 5, 8, 1, True), (10, 2, 16, 3, True), (4, 4, 4, 4, False))


@exercise("08_debugging:relu_layer")
def relu_layer(student):
    rng = np.random.default_rng(40)
    for n, d, h, o, x_grad in RELU_CASES:
        what = f"two_layer(x of shape {(n, d)}, hidden width {h}, {o} outputs{', x requires grad' if x_grad else ''})"
        xa = rng.standard_normal((n, d))
        w1a, b1a, w2a = rng.standard_normal((d, h)), rng.standard_normal(h), rng.standard_normal((h, o))
        upstream = rng.standard_normal((n, o))
        got = student.call("two_layer", {"recipe": "case_08", "x": xa, "w1": w1a, "b1": b1a, "w2": w2a,
                                         "x_grad": x_grad, "upstream": upstream}, observe="two_layer_08", what=what)
        pre = xa @ w1a + b1a
        _expect_tensor(got, what)
        expect_array(got["value"], np.maximum(pre, 0) @ w2a, f"{what}: forward", tol=1e-10)
        expect(got["backward"] is None, f"backward of {what} raised {got['backward']}")
        through = (pre > 0) * (upstream @ w2a.T)
        wanted = [("w2", np.maximum(pre, 0).T @ upstream), ("b1", through.sum(0)), ("w1", xa.T @ through)]
        if x_grad:
            wanted.append(("x", through @ w1a.T))
        for name, want in wanted:
            expect(got["grads"][name] is not None, f"{what}: {name} got no gradient: the first layer must stay in "
                                                   "the graph")
            expect_array(got["grads"][name], want, f"{what}: {name}.grad (the ReLU must be recorded, so that backward "
                                                   "masks the gradient where x @ w1 + b1 < 0)", tol=1e-9)


# ---- Exercise 5: GradNormLogger --------------------------------------------------------------------------------------

def _grad_norms(model):
    return {n: float(np.linalg.norm(p.grad.numpy())) for n, p in model.named_parameters() if p.grad is not None}


def _reached(got, key, index=None):
    """``got[key]`` (or its ``index``-th item); when the scenario stopped before it, the error that stopped it."""
    present = key in got and (index is None or index < len(got[key]))
    if not present:
        where, error = got["error"] or ("the logger's scenario", "nothing came back")
        raise AssertionError(f"{where} raised {error}")
    return got[key] if index is None else got[key][index]


def _logged(norms, what):
    """What the observer read of ``logger.norms``, checked for types: ``{name: [floats]}``."""
    expect(norms["type"] == "dict", f"{what}: logger.norms should be a dict, got {norms['type']}")
    logged = {}
    for name, kind, values, others in norms["items"]:
        expect(kind == "list", f"{what}: norms[{name!r}] should be a list, got {kind}")
        expect(not others, f"{what}: norms[{name!r}] holds {', '.join(others)} values; append Python floats "
                           "(float(...) or .item())")
        logged[name] = values
    return logged


def _expect_norms(logged, name, expected, what):
    expect(len(logged.get(name, [])) == len(expected) and np.allclose(logged.get(name, []), expected, rtol=1e-12,
                                                                      atol=0),
           f"{what}: norms[{name!r}] = {logged.get(name)}, expected {expected}")


@exercise("08_debugging:grad_norm_logger")
def grad_norm_logger(student):
    got = student.call("GradNormLogger", {"recipe": "case_08"}, observe="grad_norm_logger_08",
                       what="GradNormLogger on a model with two heads", timeout=30)
    twin = cases.two_heads_08()  # the same model without a logger: the gradients and norms to expect
    wanted = [n for n, p in twin.named_parameters() if p.requires_grad]
    logged = _logged(_reached(got, "new"), "a new logger")
    expect(list(logged) == wanted, f"logger.norms should have one list per parameter that requires grad, {wanted}, "
                                   f"got {list(logged)}")
    expect(all(v == [] for v in logged.values()), "a new logger has logged nothing yet")
    expected = {n: [] for n in wanted}
    batches, tied_x, equal_x = cases.logger_inputs_08()
    for step, (head, clear) in enumerate(cases.LOGGER_STEPS_08):
        what = f"step {step} (head {head!r}{', without zero_grad: .grad accumulates' if not clear else ''})"
        if clear:
            twin.zero_grad()
        twin(torch.tensor(batches[step]), head).pow(2).mean().backward()
        seen = _reached(got, "steps", step)
        for n, q in twin.named_parameters():
            g = seen["grads"].get(n)
            same = (g is None) == (q.grad is None) and (g is None or (g.shape == tuple(q.shape) and np.allclose(
                g, q.grad.numpy(), rtol=1e-12, atol=0)))
            expect(same, f"{what}: {n}.grad differs from the same model without the logger; the logger must only "
                         "look (a hook registered with register_hook that returns a tensor replaces the gradient)")
        reached = {"body.weight", "body.bias", f"{head}.weight"} | ({f"{head}.bias"} if head == "a" else set())
        norms = _grad_norms(twin)
        for n in reached:
            expected[n].append(norms[n])
        logged = _logged(seen["norms"], what)
        for n in wanted:
            expect(len(logged.get(n, [])) == len(expected[n]),
                   f"{what}: norms[{n!r}] has {len(logged.get(n, []))} entries, expected {len(expected[n])} (one per "
                   "backward that updates that parameter's .grad)")
            _expect_norms(logged, n, expected[n], f"{what} (the norm of .grad right after it was updated, "
                                                  "accumulated if zero_grad was skipped)")
    expect(_logged(_reached(got, "second"), "the second logger") == logged,
           "two loggers on one model must log the same, each in its own dict")
    expect(_logged(_reached(got, "removed"), "after remove()") == logged,
           "after remove(), backward passes must log nothing more")
    second = _logged(got["second_after"], "the second logger")
    expect(len(second.get("body.bias", [])) == len(logged["body.bias"]) + 1,
           "removing one logger must not remove another logger's hooks")
    left = _reached(got, "hooks_left")
    expect(not left, f"after remove(), parameter {left[0] if left else ''} still has hooks: keep every handle and "
                     "remove each")
    tied = cases.tied_08()
    tied(torch.tensor(tied_x)).sum().backward()
    logged = _logged(_reached(got, "tied"), "a weight used twice")
    expect(len(logged.get("w", [])) == 1, f"a weight used twice in one forward: one backward updates .grad once, "
                                          f"so one entry, got {len(logged.get('w', []))}")
    _expect_norms(logged, "w", [_grad_norms(tied)["w"]], "a weight used twice (log the norm of the summed .grad)")
    equal = cases.equal_layers_08()
    equal(torch.tensor(equal_x)).pow(2).sum().backward()
    logged = _logged(_reached(got, "equal"), "two layers that hold equal values")
    for n, norm in _grad_norms(equal).items():
        _expect_norms(logged, n, [norm], "two layers that hold equal values: tell parameters apart by identity "
                                         "(`is`, or id(param) as a key), not by value: different parameters can "
                                         "hold equal values")
    if got["error"]:  # the last remove() raised
        raise AssertionError(f"{got['error'][0]} raised {got['error'][1]}")
