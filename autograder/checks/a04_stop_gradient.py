"""Hidden tests of assignment 04_stop_gradient: a straight-through estimator, EMA targets, freezing, a
gradient penalty."""
import contextlib
import copy
import gc

import numpy as np

import chibigrad as torch
import chibigrad.nn.functional as F
from chibigrad import memory, nn, optim

from . import assert_close, call, expect, numerical_grads
from .contract import expect_freed, expect_version_checked, raw_backward


@contextlib.contextmanager
def _no_cycle_collection():
    """Memory is measured in here: no automatic cycle collection frees older garbage meanwhile."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# ---- exercise 1: SignSTE ----------------------------------------------------------------------------------------------

def _sign(a):
    return np.where(a >= 0, 1.0, -1.0)


def check_sign_ste(SignSTE):
    rng = np.random.default_rng(4)
    for shape, dtype in [((), torch.float64), ((7,), torch.float32), ((3, 4), torch.float64), ((2, 3, 4), torch.float32)]:
        what = f"SignSTE on a {str(dtype)[6:]} tensor of shape {shape}"
        data = rng.uniform(-2.5, 2.5, shape)
        x = torch.tensor(data, dtype=dtype, requires_grad=True)
        y = call(what, SignSTE.apply, x)
        expect(isinstance(y, torch.Tensor), f"{what}: returned a {type(y).__name__}, expected a Tensor")
        expect(y.dtype == dtype, f"{what}: the result is {y.dtype}, expected x's dtype {dtype}")
        assert_close(y, _sign(x._array), f"{what}: forward")
        expect(y.grad_fn is not None and y.grad_fn.name() == "SignSTEBackward",
               f"{what}: the result's grad_fn should be SignSTEBackward, got {y.grad_fn}")
        g = torch.tensor(rng.standard_normal(shape), dtype=dtype)
        raw = raw_backward(f"{what}: backward", y, g)[0]
        assert_close(raw, np.where(np.abs(x._array) <= 1, g._array, 0.0), f"{what}: the gradient backward returns "
                     "(grad where |x| <= 1, 0 elsewhere)")
        call(f"{what}: backward", y.backward, g)
        expect_freed(what, lambda: y.backward(g), f"{what}: a second backward worked; keep what backward needs "
                                                  "with ctx.save_for_backward so that backward frees it",
                     raised=lambda err: f"{what}: a second backward raised {err!r}, expected PyTorch's 'Trying to "
                                        "backward through the graph a second time' error")
    x = torch.tensor([-1.0, 1.0, -1.0000001, 1.0000001, 0.0, -0.0], dtype=torch.float64, requires_grad=True)
    y = call("SignSTE at the edges", SignSTE.apply, x)
    assert_close(y, [-1.0, 1.0, -1.0, 1.0, 1.0, 1.0], "SignSTE at [-1, 1, -1.0000001, 1.0000001, 0, -0]: forward "
                 "(0 maps to +1)")
    y.sum().backward()
    assert_close(x.grad, [1.0, 1.0, 0.0, 0.0, 1.0, 1.0], "SignSTE at [-1, 1, -1.0000001, 1.0000001, 0, -0]: x.grad "
                 "(the gradient passes where |x| <= 1, edges included)")
    _check_binarised_training(SignSTE)


def _check_binarised_training(SignSTE):
    """Three SGD steps of a binarised linear layer, against the same steps written with numpy."""
    rng = np.random.default_rng(5)
    w0, inputs, targets = rng.uniform(-1.6, 1.6, (3, 5)), rng.standard_normal((8, 5)), rng.standard_normal((8, 3))
    w = torch.tensor(w0, requires_grad=True)
    opt = optim.SGD([w], lr=0.3)
    expected = w0.copy()
    for step in range(3):
        opt.zero_grad()
        out = F.linear(torch.tensor(inputs), call("SignSTE in a binarised layer", SignSTE.apply, w))
        ((out - torch.tensor(targets)) ** 2).mean().backward()
        opt.step()
        upstream = 2 * (inputs @ _sign(expected).T - targets).T @ inputs / targets.size
        expected = expected - 0.3 * np.where(np.abs(expected) <= 1, upstream, 0.0)
        assert_close(w, expected, f"a binarised linear layer (weights sign(w)), after SGD step {step + 1}: w")


# ---- exercise 2: ema_update_ --------------------------------------------------------------------------------------------

def _pair(seed, depth=2, batchnorm=True, dtype=torch.float64, requires_grad=False):
    torch.manual_seed(seed)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(4, 4)] + ([nn.BatchNorm1d(4)] if batchnorm else []) + [nn.Tanh()]
    online = nn.Sequential(*layers, nn.Linear(4, 2)).to(dtype)
    target = copy.deepcopy(online).requires_grad_(requires_grad)
    online(torch.randn(6, 4, dtype=dtype))  # running statistics move
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in online.parameters():
            p.add_(torch.tensor(rng.standard_normal(tuple(p.shape)), dtype=dtype))
    return target, online


def _state(module):
    return {n: t.detach().clone() for n, t in [*module.named_parameters(), *module.named_buffers()]}


def _check_ema_case(ema_update_, what, target, online, decay):
    params, buffers = dict(target.named_parameters()), dict(target.named_buffers())
    arrays = {n: p._array for n, p in params.items()}
    buffer_arrays = {n: b._array for n, b in buffers.items()}
    versions = {n: p._version for n, p in params.items()}
    flags = {n: p.requires_grad for n, p in params.items()}
    before, online_before = _state(target), _state(online)
    with _no_cycle_collection():
        saved = memory.saved()
        call(what, ema_update_, target, online, decay)
        grown = memory.saved() - saved
    expect(grown == 0, f"{what}: {grown} bytes of saved tensors appeared: the update "
                                    "recorded a graph; do it inside torch.no_grad()")
    online_params, online_buffers = dict(online.named_parameters()), dict(online.named_buffers())
    for n, p in target.named_parameters():
        expect(p is params[n], f"{what}: target parameter {n} was replaced by a new tensor; update it in place")
        expect(p._array is arrays[n], f"{what}: target parameter {n} holds a new array; update it in place (mul_, "
                                      "add_, copy_)")
        expect(p.grad_fn is None, f"{what}: target parameter {n} has a grad_fn ({p.grad_fn}): the update was "
                                  "recorded; do it inside torch.no_grad()")
        expect(p.requires_grad == flags[n], f"{what}: target parameter {n}: requires_grad changed to {p.requires_grad}")
        expect(p._version > versions[n], f"{what}: target parameter {n}: its version did not change. Use in-place "
                                         "operations on the parameter itself, not on p.data (a separate tensor with "
                                         "its own version counter), so autograd can notice the change")
        assert_close(p, decay * before[n]._array + (1 - decay) * online_params[n]._array, f"{what}: target {n}",
                     rtol=1e-5, atol=1e-6)
    for n, b in target.named_buffers():
        expect(b is buffers[n], f"{what}: target buffer {n} was replaced by a new tensor; copy into it (copy_)")
        expect(b._array is buffer_arrays[n] and not np.shares_memory(b._array, online_buffers[n]._array),
               f"{what}: target buffer {n} now shares its memory with the online network's (b.data = o.data?): "
               "the target's statistics would move whenever the online network trains; copy the values into the "
               "target's own buffer (copy_)")
        assert_close(b, online_buffers[n]._array, f"{what}: target buffer {n} (buffers are copied, not averaged)")
    for n, t in [*online.named_parameters(), *online.named_buffers()]:
        assert_close(t, online_before[n]._array, f"{what}: online {n} changed; leave online alone")
        expect(t.grad is None, f"{what}: online {n} got a .grad")


def check_ema_update(ema_update_):
    for decay in (0.9, 0.0, 1.0, 0.996):
        _check_ema_case(ema_update_, f"ema_update_ with decay {decay}", *_pair(1), decay)
    _check_ema_case(ema_update_, "ema_update_ on a target that requires grad (a plain deepcopy)",
                    *_pair(2, requires_grad=True), 0.8)
    _check_ema_case(ema_update_, "ema_update_ on float32 modules", *_pair(3, dtype=torch.float32), 0.75)
    _check_ema_case(ema_update_, "ema_update_ on a model without buffers", *_pair(4, batchnorm=False), 0.5)
    target, online = _pair(5, depth=30)
    for k in range(3):
        _check_ema_case(ema_update_, f"ema_update_ on a 30-block model, update {k + 1}", target, online, 0.9)
    target, online = _pair(6, requires_grad=True)
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    out = target(x).sum()  # the graph saved target's weights (for x's gradient)
    call("ema_update_ while a graph that saved the target's weights waits for backward", ema_update_, target, online,
         0.9)
    expect_version_checked("ema_update_", out.backward,
                           "a graph saved the target's weights, then ema_update_ changed them and backward did not "
                           "notice: it used the new values silently. Update the parameters themselves in place "
                           "(not p.data), so their version counter changes",
                           raised=lambda err: f"backward after ema_update_ raised {err!r}")


# ---- exercise 3: fine_tune ----------------------------------------------------------------------------------------------

class _Net(nn.Module):
    """Nested names: encoder.layers.0 ... encoder.layers.11, encoder.norm, head, head_bn."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.Module()
        self.encoder.layers = nn.Sequential(*[nn.Linear(4, 4) for _ in range(12)])
        self.encoder.norm = nn.BatchNorm1d(4)
        self.head_bn = nn.BatchNorm1d(4)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        for layer in self.encoder.layers:
            x = layer(x).tanh()
        return self.head(self.head_bn(self.encoder.norm(x)))


def _sequential12():
    layers = []
    for _ in range(6):
        layers += [nn.Linear(4, 4), nn.BatchNorm1d(4)]
    return nn.Sequential(*layers)  # 12 modules: "0" ... "11"


def _inside(name, trainable):
    return any(name == t or name.startswith(t + ".") for t in trainable)


def _check_fine_tune_case(fine_tune, what, model, trainable, inputs):
    model.train()
    opt = call(what, fine_tune, model, trainable, 0.05)
    names = [n for n, _ in model.named_parameters()]
    wanted = [n for n in names if _inside(n, trainable)]
    got = [n for n, p in model.named_parameters() if p.requires_grad]
    expect(got == wanted, f"{what}: trainable parameters {got}, expected {wanted}")
    expect(isinstance(opt, optim.SGD), f"{what}: returned a {type(opt).__name__}, expected an optim.SGD")
    held = [p for g in opt.param_groups for p in g["params"]]
    params = dict(model.named_parameters())
    expect([id(p) for p in held] == [id(params[n]) for n in wanted],
           f"{what}: the optimizer holds {len(held)} tensors; it should hold the trainable parameters "
           f"{wanted} only, in the model's order")
    expect(all(g["momentum"] == 0.9 and g["lr"] == 0.05 for g in opt.param_groups),
           f"{what}: SGD with momentum 0.9 and the given lr")
    modules = dict(model.named_modules())
    for name, module in modules.items():
        if isinstance(module, nn.BatchNorm1d):
            expect(module.training == _inside(name, trainable),
                   f"{what}: BatchNorm {name!r} is in {'training' if module.training else 'eval'} mode; "
                   "BatchNorms outside the trainable modules go to eval mode, the others stay as they are")
    before = _state(model)
    with _no_cycle_collection():
        saved = memory.saved()
        loss = model(inputs).pow(2).mean()
        kept = memory.saved() - saved
    loss.backward()
    opt.step()
    for n, t in [*model.named_parameters(), *model.named_buffers()]:
        owner = n.rsplit(".", 1)[0]
        moves = _inside(n, trainable) or (isinstance(modules.get(owner), nn.BatchNorm1d) and _inside(owner, trainable)
                                          and n.endswith(("running_mean", "running_var", "num_batches_tracked")))
        changed = not np.array_equal(t._array, before[n]._array)
        if not moves:
            expect(not changed, f"{what}: {n} changed during a training step, but it is frozen")
        if n in params and not _inside(n, trainable):
            expect(params[n].grad is None, f"{what}: frozen {n} got a .grad")
    return kept


def check_fine_tune(fine_tune):
    torch.manual_seed(8)
    inputs = torch.randn(10, 4)
    _check_fine_tune_case(fine_tune, "fine_tune on a 12-module Sequential, trainable ['1']", _sequential12(), ["1"],
                          inputs)
    _check_fine_tune_case(fine_tune, "fine_tune on a 12-module Sequential, trainable ['10', '11']", _sequential12(),
                          ["10", "11"], inputs)
    _check_fine_tune_case(fine_tune, "fine_tune with nested names, trainable ['head']", _Net(), ["head"], inputs)
    _check_fine_tune_case(fine_tune, "fine_tune with nested names, trainable ['encoder.layers.1', 'head_bn']",
                          _Net(), ["encoder.layers.1", "head_bn"], inputs)
    _check_fine_tune_case(fine_tune, "fine_tune with nested names, trainable ['encoder.layers']", _Net(),
                          ["encoder.layers"], inputs)
    full = _check_fine_tune_case(fine_tune, "fine_tune with everything trainable ['encoder', 'head', 'head_bn']",
                                 _Net(), ["encoder", "head", "head_bn"], inputs)
    frozen = _check_fine_tune_case(fine_tune, "fine_tune with the encoder frozen", _Net(), ["head", "head_bn"], inputs)
    expect(frozen < full / 4, f"with the encoder frozen, the forward pass saved {frozen} bytes (everything trainable: "
                              f"{full}); a frozen encoder should not be recorded at all")


# ---- exercise 4: gradient_penalty -----------------------------------------------------------------------------------

class _Critic(nn.Module):
    def __init__(self, shape):
        super().__init__()
        size = int(np.prod(shape))
        self.hidden, self.out = nn.Linear(size, 5), nn.Linear(5, 1)

    def forward(self, x):
        return self.out(self.hidden(x.reshape(x.shape[0], -1)).tanh())


def _input_grad_norms(D, points):
    """Per-sample norms of d D(x) / dx from central differences of D (float64)."""
    grads = numerical_grads(lambda x: D(x).sum().reshape(1), [torch.tensor(points)], np.ones(1))[0]
    return np.sqrt((grads.reshape(len(points), -1) ** 2).sum(axis=1))


def _penalty_case(gradient_penalty, what, shape, seed, median_norm):
    """A critic scaled so that the median norm of its input gradient at the points is ``median_norm``."""
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    D = _Critic(shape[1:]).to(torch.float64)
    G = nn.Linear(shape[-1], shape[-1]).to(torch.float64)
    real = torch.tensor(rng.standard_normal(shape) + 1)
    fake = G(torch.tensor(rng.standard_normal(shape)))
    alpha = torch.tensor(rng.uniform(0, 1, (shape[0],) + (1,) * (len(shape) - 1)))
    points = alpha._array * real._array + (1 - alpha._array) * fake._array
    with torch.no_grad():  # D's output is linear in its last weight, and so is its input gradient
        D.out.weight.mul_(median_norm / np.median(_input_grad_norms(D, points)))
    norms = _input_grad_norms(D, points)
    fake_node = fake.grad_fn
    penalty = call(what, gradient_penalty, D, real, fake, alpha)
    expect(isinstance(penalty, torch.Tensor) and penalty.shape == (), f"{what}: expected a scalar tensor")
    assert_close(penalty, (np.maximum(norms - 1, 0) ** 2).mean(), f"{what}: the penalty (against central "
                 f"differences of D; the samples' gradient norms are {np.round(norms, 3).tolist()})", rtol=1e-6,
                 atol=1e-8)
    expect(not real.requires_grad and real.grad is None, f"{what}: real was changed to require grad; make a new leaf")
    expect(fake.grad_fn is fake_node, f"{what}: fake was changed; make a new leaf")
    expect(all(p.grad is None for p in D.parameters()), f"{what}: D's .grad was written; use torch.autograd.grad")
    expect(penalty.grad_fn is not None, f"{what}: the penalty has no grad_fn: compute the input gradient with "
                                        "create_graph=True so that the penalty depends on D's weights")
    call(f"{what}: penalty.backward()", penalty.backward)
    expect(all(p.grad is None for p in G.parameters()), f"{what}: the penalty's gradient reached the generator: "
                                                        "detach the interpolated points (a fresh leaf)")
    _check_weight_gradient(gradient_penalty, what, D, real, fake, alpha)


def _check_weight_gradient(gradient_penalty, what, D, real, fake, alpha, eps=1e-6):
    """d penalty / d D's first weight, from penalty.backward(), against central differences of the penalty."""
    weight = D.hidden.weight
    got = weight.grad._array.copy()
    expected = np.zeros_like(got)
    for index in np.ndindex(got.shape):  # the array itself is shifted: the penalty needs grad mode on
        values = []
        for sign in (1, -1):
            weight._array[index] += sign * eps
            values.append(call(what, gradient_penalty, D, real, fake.detach(), alpha).item())
            weight._array[index] -= sign * eps
        expected[index] = (values[0] - values[1]) / (2 * eps)
    assert_close(torch.tensor(got), expected, f"{what}: d penalty / d D.hidden.weight (against central differences "
                 "of the penalty)", rtol=1e-5, atol=1e-7)


def check_gradient_penalty(gradient_penalty):
    _penalty_case(gradient_penalty, "gradient_penalty on samples of shape (6, 3)", (6, 3), 0, 1.0)
    _penalty_case(gradient_penalty, "gradient_penalty on a single sample of shape (1, 4)", (1, 4), 1, 1.7)
    _penalty_case(gradient_penalty, "gradient_penalty on samples of shape (5, 2, 3) (each sample a matrix)",
                  (5, 2, 3), 2, 1.05)
    _penalty_case(gradient_penalty, "gradient_penalty on samples of shape (4, 2, 2, 2)", (4, 2, 2, 2), 3, 1.1)
    _penalty_case(gradient_penalty, "gradient_penalty with a flat critic (every norm below 1)", (5, 3), 4, 0.3)
    x = torch.ones(3, 2)
    lin = nn.Linear(2, 1)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[0.6, 0.8]]))
    penalty = call("gradient_penalty with a linear critic of weight norm 1", gradient_penalty, lin, x, x, torch.ones(3, 1))
    assert_close(penalty, 0.0, "gradient_penalty with a linear critic of weight [0.6, 0.8] (norm 1)", atol=1e-6)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.2, 1.6]]))
    penalty = call("gradient_penalty with a linear critic of weight norm 2", gradient_penalty, lin, x, x, torch.ones(3, 1))
    assert_close(penalty, 1.0, "gradient_penalty with a linear critic of weight [1.2, 1.6] (norm 2)", rtol=1e-5)
