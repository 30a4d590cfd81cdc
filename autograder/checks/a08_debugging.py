"""Hidden tests of assignment 08_debugging: fixed training code (zero_grad and a memory leak, an in-place
change of a saved tensor, a misplaced detach, a ReLU through .data) and a gradient-norm logging hook."""
import gc

import numpy as np

import chibigrad as torch
from chibigrad import memory, nn

from . import assert_close, call, expect


def _model(seed, width=16, n_in=4):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(n_in, width), nn.Tanh(), nn.Linear(width, 1)).double()


def _data(n, seed, n_in=4):
    rng = np.random.default_rng(seed)
    inputs = rng.standard_normal((n, n_in))
    return torch.tensor(inputs), torch.tensor(np.cos(inputs.sum(1, keepdims=True)))


# ---- Exercise 1: train ---------------------------------------------------------------------------------------------

def _reference_training(model, inputs, targets, steps, lr):
    """Plain gradient descent by hand (autograd.grad, numpy updates): the oracle, and the peak of saved
    bytes one step needs."""
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
    return history, peak


def check_train(train):
    for seed, steps, lr, n, width in [(0, 1, 0.1, 8, 4), (1, 5, 0.05, 16, 16), (2, 25, 0.1, 32, 8), (3, 12, 0.2, 5, 32)]:
        inputs, targets = _data(n, seed)
        model, twin = _model(seed, width), _model(seed, width)
        expected, step_peak = _reference_training(twin, inputs, targets, steps, lr)
        case = f"train(model of width {width}, {n} examples, steps={steps}, lr={lr})"
        gc.collect()  # garbage from earlier cases is not this call's doing
        memory.reset_peak()
        start = memory.saved()
        history = call(case, train, model, inputs, targets, steps, lr=lr)
        peak, left = memory.max_saved() - start, memory.saved() - start
        expect(isinstance(history, list) and len(history) == steps,
               f"{case}: expected a list of {steps} losses, got {type(history).__name__} "
               f"{'' if not isinstance(history, list) else f'of length {len(history)}'}")
        for v in history:
            expect(type(v) is float, f"{case}: history holds {type(v).__name__} values; append loss.item() (a Python "
                                     "float): a loss tensor keeps its whole graph alive")
        expect(left == 0, f"{case}: after training, {left} bytes of saved tensors are still alive (a graph kept "
                          "with retain_graph=True, or by a loss tensor you kept)")
        for k, (p, q) in enumerate(zip(model.parameters(), twin.parameters())):
            assert_close(p.detach(), q._array, f"{case}: parameter {k} after training (each step must use its own "
                                               "gradient only: zero the gradients before backward)", rtol=1e-9)
        assert_close(torch.tensor(history, dtype=torch.float64), np.array(expected), f"{case}: the losses in history", rtol=1e-9)
        expect(peak <= step_peak,
               f"{case}: at its peak training held {peak} bytes of saved tensors, but one step needs {step_peak}: "
               "a step's graph is still alive while the next one is built (retain_graph=True keeps the saved "
               "tensors until the loss tensor goes away)")


# ---- Exercise 2: attention_weights -----------------------------------------------------------------------------------

def _softmax_rows(s):
    e = np.exp(s - s.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def check_attention(attention_weights):
    rng = np.random.default_rng(20)
    for n, d, m, scale in [(3, 4, 5, 1.0), (1, 8, 1, 1.0), (6, 2, 3, 1.0), (4, 3, 4, 60.0), (2, 16, 7, 0.1),
                             (3, 4, 5, 1000.0)]:  # scores in the thousands: exp overflows without the max shift
        case = f"attention_weights(q of shape {(n, d)}, k of shape {(m, d)}{', large scores' if scale > 10 else ''})"
        qa, ka = rng.standard_normal((n, d)) * scale, rng.standard_normal((m, d))
        q, k = torch.tensor(qa, requires_grad=True), torch.tensor(ka, requires_grad=True)
        w = call(case, attention_weights, q, k)
        expected = _softmax_rows(qa @ ka.T / np.sqrt(d))
        assert_close(w, expected, f"{case}: forward", rtol=1e-9, atol=1e-12)
        upstream = rng.standard_normal((n, m))
        call(f"backward of {case}", (w * torch.tensor(upstream)).sum().backward)
        dscores = expected * (upstream - (upstream * expected).sum(1, keepdims=True)) / np.sqrt(d)
        for name, t, want in [("q", q, dscores @ ka), ("k", k, dscores.T @ qa)]:
            expect(t.grad is not None, f"{case}: {name} got no gradient; the normalisation must stay in the graph "
                                       "(detach() cuts it)")
            assert_close(t.grad, want, f"{case}: {name}.grad (an in-place change through .data or under no_grad "
                                       "is invisible to backward, which then differentiates something else)",
                         rtol=1e-8, atol=1e-10)
    q = torch.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    w = call("attention_weights with keys that need no gradient", attention_weights, q,
             torch.tensor(rng.standard_normal((4, 3))))
    call("backward with keys that need no gradient", w[:, 0].sum().backward)
    expect(q.grad is not None, "attention_weights with keys that need no gradient: q got no gradient")


# ---- Exercise 3: td_loss ---------------------------------------------------------------------------------------------

def check_td_loss(td_loss):
    for seed, n, gamma, width in [(30, 8, 0.9, 16), (31, 1, 0.5, 4), (32, 20, 0.99, 8), (33, 6, 0.0, 16)]:
        q_net = _model(seed, width)
        states, _ = _data(n, seed)
        next_states, rewards = _data(n, seed + 100)
        case = f"td_loss({n} transitions, gamma={gamma})"
        loss = call(case, td_loss, q_net, states, rewards, next_states, gamma=gamma)
        expect(isinstance(loss, torch.Tensor) and loss.requires_grad,
               f"{case}: expected a loss tensor that requires grad, got {loss!r}")
        params = list(q_net.parameters())
        got = call(f"torch.autograd.grad of {case}", torch.autograd.grad, loss, params, allow_unused=True)
        with torch.no_grad():
            target = (rewards + gamma * q_net(next_states))._array
            predicted = q_net(states)._array
        assert_close(loss.detach(), ((predicted - target) ** 2).mean(), f"{case}: the loss", rtol=1e-10)
        fixed = torch.tensor(target)
        expected = torch.autograd.grad((q_net(states) - fixed).pow(2).mean(), params)
        for k, (g, e) in enumerate(zip(got, expected)):
            expect(g is not None, f"{case}: parameter {k} got no gradient: the prediction q_net(states) must stay "
                                  "in the graph")
            assert_close(g, e._array, f"{case}: gradient of parameter {k} (it must come from q_net(states) only; "
                                      "the target is a constant)", rtol=1e-9, atol=1e-12)


# ---- Exercise 4: two_layer -------------------------------------------------------------------------------------------

def check_relu_layer(two_layer):
    rng = np.random.default_rng(40)
    for n, d, h, o, x_grad in [(6, 3, 4, 2, False), (1, 5, 8, 1, True), (10, 2, 16, 3, True), (4, 4, 4, 4, False)]:
        case = f"two_layer(x of shape {(n, d)}, hidden width {h}, {o} outputs{', x requires grad' if x_grad else ''})"
        xa = rng.standard_normal((n, d))
        w1a, b1a, w2a = rng.standard_normal((d, h)), rng.standard_normal(h), rng.standard_normal((h, o))
        x = torch.tensor(xa, requires_grad=x_grad)
        w1, b1, w2 = [torch.tensor(a, requires_grad=True) for a in (w1a, b1a, w2a)]
        out = call(case, two_layer, x, w1, b1, w2)
        pre = xa @ w1a + b1a
        assert_close(out, np.maximum(pre, 0) @ w2a, f"{case}: forward", rtol=1e-10)
        upstream = rng.standard_normal((n, o))
        call(f"backward of {case}", (out * torch.tensor(upstream)).sum().backward)
        through = (pre > 0) * (upstream @ w2a.T)
        wanted = [("w2", w2, np.maximum(pre, 0).T @ upstream), ("b1", b1, through.sum(0)), ("w1", w1, xa.T @ through)]
        if x_grad:
            wanted.append(("x", x, through @ w1a.T))
        for name, t, want in wanted:
            expect(t.grad is not None, f"{case}: {name} got no gradient: the first layer must stay in the graph")
            assert_close(t.grad, want, f"{case}: {name}.grad (the ReLU must be recorded, so that backward masks the "
                                       "gradient where x @ w1 + b1 < 0)", rtol=1e-9, atol=1e-12)


# ---- Exercise 5: GradNormLogger --------------------------------------------------------------------------------------

class _TwoHeads(nn.Module):
    """A shared body and two heads; ``forward(x, head)`` uses one head, so the other gets no gradient."""

    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.a = nn.Linear(8, 1)
        self.b = nn.Linear(8, 1)

    def forward(self, x, head):
        return getattr(self, head)(self.body(x).tanh())


class _Tied(nn.Module):
    """One weight used twice in a forward."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor(np.linspace(-1, 1, 16).reshape(4, 4)))

    def forward(self, x):
        return (x @ self.w).tanh() @ self.w


def _grad_norms(model):
    return {n: float(np.linalg.norm(p.grad._array)) for n, p in model.named_parameters() if p.grad is not None}


def _logged(what, logger):
    norms = getattr(logger, "norms", None)
    expect(isinstance(norms, dict), f"{what}: logger.norms should be a dict, got {type(norms).__name__}")
    for name, values in norms.items():
        expect(isinstance(values, list), f"{what}: norms[{name!r}] should be a list, got {type(values).__name__}")
        for v in values:
            expect(type(v) is float, f"{what}: norms[{name!r}] holds a {type(v).__name__}; append Python floats "
                                     "(float(...) or .item())")
    return {name: list(values) for name, values in norms.items()}


def check_grad_norm_logger(GradNormLogger):
    torch.manual_seed(50)
    model = _TwoHeads().double()
    model.b.bias.requires_grad_(False)
    torch.manual_seed(50)
    twin = _TwoHeads().double()
    twin.b.bias.requires_grad_(False)
    logger = call("GradNormLogger(model)", GradNormLogger, model)
    wanted = [n for n, p in model.named_parameters() if p.requires_grad]
    expect(list(_logged("a new logger", logger)) == wanted,
           f"logger.norms should have one list per parameter that requires grad, {wanted}, got "
           f"{list(logger.norms)}")
    expect(all(v == [] for v in logger.norms.values()), "a new logger has logged nothing yet")
    second = call("a second GradNormLogger on the same model", GradNormLogger, model)
    expected = {n: [] for n in wanted}
    rng = np.random.default_rng(51)
    steps = [("a", True), ("b", True), ("a", True), ("a", False), ("b", False)]
    for step, (head, clear) in enumerate(steps):
        x = torch.tensor(rng.standard_normal((5, 4)))
        what = f"step {step} (head {head!r}{', without zero_grad: .grad accumulates' if not clear else ''})"
        for m in (model, twin):
            if clear:
                m.zero_grad()
            call(f"backward at {what}", m(x, head).pow(2).mean().backward)
        for (n, p), q in zip(model.named_parameters(), twin.parameters()):
            expect((p.grad is None) == (q.grad is None) and (p.grad is None or np.array_equal(p.grad._array,
                                                                                              q.grad._array)),
                   f"{what}: {n}.grad differs from the same model without the logger; the logger must only look "
                   "(a hook registered with register_hook that returns a tensor replaces the gradient)")
        reached = {"body.weight", "body.bias", f"{head}.weight"} | ({f"{head}.bias"} if head == "a" else set())
        norms = _grad_norms(model)
        for n in reached:
            expected[n].append(norms[n])
        logged = _logged(what, logger)
        for n in wanted:
            expect(len(logged[n]) == len(expected[n]),
                   f"{what}: norms[{n!r}] has {len(logged[n])} entries, expected {len(expected[n])} (one per backward "
                   "that updates that parameter's .grad)")
            expect(np.allclose(logged[n], expected[n], rtol=1e-12, atol=0),
                   f"{what}: norms[{n!r}] = {logged[n]}, expected {expected[n]}: the norm of .grad right after it was "
                   "updated (accumulated, if zero_grad was skipped)")
    expect(_logged("the second logger", second) == logged, "two loggers on one model must log the same, each in its "
                                                           "own dict")
    call("logger.remove()", logger.remove)
    call("backward after remove()", model(torch.ones(2, 4, dtype=torch.float64), "a").sum().backward)
    expect(_logged("after remove()", logger) == logged, "after remove(), backward passes must log nothing more")
    expect(len(second.norms["body.bias"]) == len(logged["body.bias"]) + 1,
           "removing one logger must not remove another logger's hooks")
    call("second.remove()", second.remove)
    for n, p in model.named_parameters():
        expect(not p._post_accumulate_hooks and not p._backward_hooks,
               f"after remove(), parameter {n} still has hooks: keep every handle and remove each")
    tied = _Tied()
    logger = call("GradNormLogger on a model that uses one weight twice", GradNormLogger, tied)
    x = torch.tensor(rng.standard_normal((3, 4)))
    tied(x).sum().backward()
    logged = _logged("a weight used twice", logger)
    expect(len(logged["w"]) == 1, f"a weight used twice in one forward: one backward updates .grad once, so one "
                                  f"entry, got {len(logged['w'])}")
    expect(np.isclose(logged["w"][0], _grad_norms(tied)["w"], rtol=1e-12, atol=0),
           "a weight used twice: log the norm of the summed .grad")
    logger.remove()
    equal = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3)).double()
    with torch.no_grad():  # two layers holding equal values (zero biases, copied weights): still two parameters
        equal[0].bias.zero_()
        equal[1].bias.zero_()
        equal[1].weight.copy_(equal[0].weight)
    logger = call("GradNormLogger on two layers that hold equal values", GradNormLogger, equal)
    equal(torch.tensor(rng.standard_normal((4, 3)))).pow(2).sum().backward()
    logged, norms = _logged("two layers that hold equal values", logger), _grad_norms(equal)
    for n, norm in norms.items():
        expect(len(logged[n]) == 1 and np.isclose(logged[n][0], norm, rtol=1e-12, atol=0),
               f"two layers that hold equal values: norms[{n!r}] = {logged[n]}, expected [{norm}]. Tell parameters "
               "apart by identity (`is`, or id(param) as a key), not by value: different parameters can hold equal "
               "values")
    logger.remove()
