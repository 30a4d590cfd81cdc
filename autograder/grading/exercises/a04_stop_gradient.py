"""Hidden checks of 04_stop_gradient (a straight-through estimator, an EMA target network, freezing, a gradient
penalty), run by the judge.

Inputs are written out (arrays, the critic's weights included) or named by recipe (``cases.ema_pair_04``,
``cases.fine_tune_model_04``) and built on both sides. The student's code runs in the student process and comes
back as values and facts: the same tensor objects, versions that grew, bytes of saved tensors. The judge's
answers come from numpy (the penalty in closed form, its weight gradient by central differences) and from its
own copy of each model.
"""
import numpy as np

from chibigrad import nn
from chibigrad.autograd.node import FREED_MESSAGE

from .. import cases
from ..judge import exercise, expect, expect_array

INPLACE_MESSAGE = "modified by an inplace operation"  # part of the engine's error for a saved tensor changed in place


def _case(**fields):
    return {"recipe": "case_04", **fields}


# ---- exercise 1: SignSTE ----------------------------------------------------------------------------------------------

def _sign(a):
    return np.where(a >= 0, 1.0, -1.0)


def _sign_ste_case(student, what, x, g, dtype):
    """SignSTE.apply on ``x`` (of ``dtype``): forward, grad_fn, what backward returned for ``g``, the engine's
    gradient and a second backward through the freed graph."""
    got = student.call("SignSTE", _case(inputs=[x], requires_grad=[True], grad=g, dtype=dtype), observe="function",
                       what=what)
    expect(got["type"] == "Tensor", f"{what}: returned a {got['type']}, expected a Tensor")
    expect(got["dtype"] == f"torch.{dtype}", f"{what}: the result is {got['dtype']}, expected x's dtype torch.{dtype}")
    expect_array(got["value"], _sign(x), f"{what}: forward")
    expect(got["grad_fn"] == "SignSTEBackward", f"{what}: the result's grad_fn should be SignSTEBackward, got "
                                                f"{got['grad_fn']}")
    raw, expected = got["raw"], np.where(np.abs(x) <= 1, g, 0.0)
    expect(len(raw) == 1 and isinstance(raw[0], np.ndarray), f"{what}: backward should return one Tensor, the "
                                                              f"gradient of x; it returned {len(raw)} values")
    expect_array(raw[0], expected, f"{what}: the gradient backward returns (grad where |x| <= 1, 0 elsewhere)",
                 tol=1e-6)
    expect_array(got["grads"][0], expected, f"{what}: x's gradient through the engine", tol=1e-6)
    expect(got["again"] is not None, f"{what}: a second backward worked; keep what backward needs with "
                                     "ctx.save_for_backward so that backward frees it")
    expect(got["again"] == f"RuntimeError: {FREED_MESSAGE}", f"{what}: a second backward raised {got['again']}, "
           "expected PyTorch's 'Trying to backward through the graph a second time' error")


@exercise("04_stop_gradient:sign_ste")
def sign_ste(student):
    rng = np.random.default_rng(4)
    for shape, dtype in [((), "float64"), ((7,), "float32"), ((3, 4), "float64"), ((2, 3, 4), "float32")]:
        x, g = rng.uniform(-2.5, 2.5, shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
        _sign_ste_case(student, f"SignSTE on a {dtype} tensor of shape {shape}", x, g, dtype)
    edges = np.array([-1.0, 1.0, -1.0000001, 1.0000001, 0.0, -0.0])
    _sign_ste_case(student, "SignSTE at [-1, 1, -1.0000001, 1.0000001, 0, -0] (0 maps to +1; the gradient passes "
                   "where |x| <= 1, edges included)", edges, np.arange(1.0, 7.0), "float64")
    _binarised_training(student)


def _binarised_training(student):
    """Three SGD steps of a binarised linear layer, against the same steps written with numpy."""
    rng = np.random.default_rng(5)
    w, inputs, targets = rng.uniform(-1.6, 1.6, (3, 5)), rng.standard_normal((8, 5)), rng.standard_normal((8, 3))
    got = student.call("SignSTE", _case(w=w, inputs=inputs, targets=targets, lr=0.3, steps=3), observe="binarised",
                       what="SignSTE in a binarised linear layer (weights sign(w)), three SGD steps")
    for step, value in enumerate(got):
        upstream = 2 * (inputs @ _sign(w).T - targets).T @ inputs / targets.size
        w = w - 0.3 * np.where(np.abs(w) <= 1, upstream, 0.0)
        expect_array(value, w, f"a binarised linear layer (weights sign(w)), after SGD step {step + 1}: w")
    expect(len(got) == 3, f"a binarised linear layer: {len(got)} SGD steps came back, expected 3")


# ---- exercise 2: ema_update_ ------------------------------------------------------------------------------------------

def _pair(seed, depth=2, batchnorm=True, dtype="float64", requires_grad=False):
    return {"seed": seed, "depth": depth, "batchnorm": batchnorm, "dtype": dtype, "requires_grad": requires_grad}


def _arrays(module):
    return {n: t.detach().numpy().astype(np.float64) for n, t in cases._named_state_04(module)}


def _ema_case(student, what, pair, decays, graph=False):
    """``ema_update_`` on a fresh pair, once per decay in turn; with ``graph``, backward of a graph that saved the
    target's weights before the update must notice the change."""
    target, online = cases.ema_pair_04(pair)
    expected, online_values = _arrays(target), _arrays(online)
    params, buffers = [n for n, _ in target.named_parameters()], [n for n, _ in target.named_buffers()]
    got = student.call("ema_update_", _case(pair=pair, decays=list(decays), graph=graph), observe="ema", what=what,
                       timeout=30)
    expect(len(got["updates"]) == len(decays), f"{what}: {len(got['updates'])} updates came back, expected "
                                               f"{len(decays)}")
    for k, (decay, update) in enumerate(zip(decays, got["updates"])):
        label = what if len(decays) == 1 else f"{what}, update {k + 1}"
        _expect_update(label, update, params, buffers, expected, online_values, decay)
    if graph:
        expect(got["backward"] != "", f"{what}: a graph saved the target's weights, then ema_update_ changed them and "
                                      "backward did not notice: it used the new values silently. Update the "
                                      "parameters themselves in place (not p.data), so their version counter changes")
        expect(INPLACE_MESSAGE in got["backward"], f"{what}: backward after ema_update_ raised {got['backward']}, "
                                                   f"expected the '{INPLACE_MESSAGE}' error")


def _expect_update(what, got, params, buffers, expected, online_values, decay):
    """One update against the judge's own values (``expected`` moves on to the values after it)."""
    expect(got["saved"] == 0, f"{what}: {got['saved']} bytes of saved tensors appeared: the update recorded a graph; "
                              "do it inside torch.no_grad()")
    for n in params:
        p = got["params"][n]
        expect(p["same"], f"{what}: target parameter {n} was replaced by a new tensor; update it in place")
        expect(p["same_array"], f"{what}: target parameter {n} holds a new array; update it in place (mul_, add_, "
                                "copy_)")
        expect(p["leaf"], f"{what}: target parameter {n} has a grad_fn: the update was recorded; do it inside "
                          "torch.no_grad()")
        expect(p["requires_grad_kept"], f"{what}: target parameter {n}: requires_grad changed")
        expect(p["version_grew"], f"{what}: target parameter {n}: its version did not change. Use in-place operations "
                                  "on the parameter itself, not on p.data (a separate tensor with its own version "
                                  "counter), so autograd can notice the change")
        expected[n] = decay * expected[n] + (1 - decay) * online_values[n]
        expect_array(p["value"], expected[n], f"{what}: target {n}", tol=1e-5)
    for n in buffers:
        b = got["buffers"][n]
        expect(b["same"], f"{what}: target buffer {n} was replaced by a new tensor; copy into it (copy_)")
        expect(b["same_array"] and not b["shares_online"], f"{what}: target buffer {n} now shares its memory with the "
               "online network's (b.data = o.data?): the target's statistics would move whenever the online network "
               "trains; copy the values into the target's own buffer (copy_)")
        expected[n] = online_values[n]
        expect_array(b["value"], expected[n], f"{what}: target buffer {n} (buffers are copied, not averaged)")
    expect(not got["online_changed"], f"{what}: online {got['online_changed']} changed; leave online alone")
    expect(not got["online_grads"], f"{what}: online {got['online_grads']} got a .grad")


@exercise("04_stop_gradient:ema_update")
def ema_update(student):
    for decay in (0.9, 0.0, 1.0, 0.996):
        _ema_case(student, f"ema_update_ with decay {decay}", _pair(1), [decay])
    _ema_case(student, "ema_update_ on a target that requires grad (a plain deepcopy)", _pair(2, requires_grad=True),
              [0.8])
    _ema_case(student, "ema_update_ on float32 modules", _pair(3, dtype="float32"), [0.75])
    _ema_case(student, "ema_update_ on a model without buffers", _pair(4, batchnorm=False), [0.5])
    _ema_case(student, "ema_update_ on a 30-block model", _pair(5, depth=30), [0.9] * 3)
    _ema_case(student, "ema_update_ while a graph that saved the target's weights waits for backward",
              _pair(6, requires_grad=True), [0.9], graph=True)


# ---- exercise 3: fine_tune --------------------------------------------------------------------------------------------

def _inside(name, trainable):
    return any(name == t or name.startswith(t + ".") for t in trainable)


def _fine_tune_case(student, what, model, trainable):
    """``fine_tune(model, trainable, 0.05)`` on a fresh model, against the names of the judge's own copy; the
    bytes the forward pass saved."""
    mine = cases.fine_tune_model_04(model)
    wanted = [n for n, _ in mine.named_parameters() if _inside(n, trainable)]
    got = student.call("fine_tune", _case(model=model, trainable=trainable, lr=0.05), observe="fine_tune", what=what)
    expect(got["trainable"] == wanted, f"{what}: trainable parameters {got['trainable']}, expected {wanted}")
    expect(got["sgd"], f"{what}: returned a {got['type']}, expected an optim.SGD")
    expect(got["held"] == wanted, f"{what}: the optimizer holds {got['held']}; it should hold the trainable "
                                  f"parameters {wanted} only, in the model's order")
    expect(all(s == {"momentum": 0.9, "lr": 0.05} for s in got["settings"]),
           f"{what}: SGD with momentum 0.9 and the given lr (got {got['settings']})")
    for name, module in mine.named_modules():
        if isinstance(module, nn.BatchNorm1d):
            training = got["training"].get(name)
            expect(training == _inside(name, trainable), f"{what}: BatchNorm {name!r} is in "
                   f"{'training' if training else 'eval'} mode; BatchNorms outside the trainable modules go to eval "
                   "mode, the others stay as they are")
    for n in got["changed"]:
        expect(_inside(n, trainable), f"{what}: {n} changed during a training step, but it is frozen")
    for n in got["grads"]:
        expect(_inside(n, trainable), f"{what}: frozen {n} got a .grad")
    return got["saved"]


@exercise("04_stop_gradient:fine_tune")
def fine_tune(student):
    for model, trainable in [("sequential12", ["1"]), ("sequential12", ["10", "11"]), ("net", ["head"]),
                             ("net", ["encoder.layers.1", "head_bn"]), ("net", ["encoder.layers"])]:
        names = "a 12-module Sequential" if model == "sequential12" else "nested names"
        _fine_tune_case(student, f"fine_tune with {names}, trainable {trainable}", model, trainable)
    full = _fine_tune_case(student, "fine_tune with everything trainable ['encoder', 'head', 'head_bn']", "net",
                           ["encoder", "head", "head_bn"])
    frozen = _fine_tune_case(student, "fine_tune with the encoder frozen", "net", ["head", "head_bn"])
    expect(frozen < full / 4, f"with the encoder frozen, the forward pass saved {frozen} bytes (everything trainable: "
                              f"{full}); a frozen encoder should not be recorded at all")


# ---- exercise 4: gradient_penalty -------------------------------------------------------------------------------------

def _input_grad_norms(critic, points):
    """Per-sample norms of d D(x) / dx for the critic Linear, tanh, Linear (in closed form)."""
    w1, b1, w2, _ = critic
    flat = points.reshape(len(points), -1)
    slopes = (1 - np.tanh(flat @ w1.T + b1) ** 2) * w2[0]
    return np.sqrt(((slopes @ w1) ** 2).sum(axis=1))


def _penalty(critic, points):
    return (np.maximum(_input_grad_norms(critic, points) - 1, 0) ** 2).mean()


def _weight_gradient(critic, points, eps=1e-6):
    """d penalty / d the critic's first weight, by central differences of the closed form."""
    w1, grad = critic[0], np.zeros_like(critic[0])
    for index in np.ndindex(w1.shape):
        shifted = []
        for sign in (1, -1):
            w = w1.copy()
            w[index] += sign * eps
            shifted.append(_penalty([w, *critic[1:]], points))
        grad[index] = (shifted[0] - shifted[1]) / (2 * eps)
    return grad


def _expect_penalty(what, got, penalty, tol, norms=None):
    expect(got["type"] == "Tensor" and got["shape"] == [], f"{what}: expected a scalar tensor, got a {got['type']}"
           + (f" of shape {tuple(got['shape'])}" if "shape" in got else ""))
    shown = "" if norms is None else f" (the samples' gradient norms are {np.round(norms, 3).tolist()})"
    expect_array(got["value"], penalty, f"{what}: the penalty{shown}", tol=tol)
    expect(not got["real_changed"], f"{what}: real was changed to require grad; make a new leaf")
    expect(not got["fake_changed"], f"{what}: fake was changed; make a new leaf")
    expect(not got["d_grads"], f"{what}: D's .grad was written ({got['d_grads']}); use torch.autograd.grad")
    expect(got["grad_fn"], f"{what}: the penalty has no grad_fn: compute the input gradient with create_graph=True "
                           "so that the penalty depends on D's weights")


def _penalty_case(student, what, shape, seed, median_norm):
    """A critic scaled so that the median norm of its input gradient at the points is ``median_norm``; fake
    comes from a linear generator."""
    rng = np.random.default_rng(seed)
    size, last = int(np.prod(shape[1:])), shape[-1]
    w1, b1 = rng.uniform(-1, 1, (5, size)) / np.sqrt(size), rng.uniform(-1, 1, 5) / np.sqrt(size)
    w2, b2 = rng.uniform(-1, 1, (1, 5)) / np.sqrt(5), rng.uniform(-1, 1, 1) / np.sqrt(5)
    generator = [rng.uniform(-1, 1, (last, last)) / np.sqrt(last), rng.uniform(-1, 1, last) / np.sqrt(last)]
    real, noise = rng.standard_normal(shape) + 1, rng.standard_normal(shape)
    alpha = rng.uniform(0, 1, (shape[0],) + (1,) * (len(shape) - 1))
    points = alpha * real + (1 - alpha) * (noise @ generator[0].T + generator[1])
    w2 = w2 * median_norm / np.median(_input_grad_norms([w1, b1, w2, b2], points))
    critic = [w1, b1, w2, b2]
    got = student.call("gradient_penalty", _case(critic=critic, generator=generator, real=real, noise=noise,
                                                 alpha=alpha), observe="penalty", what=what)
    _expect_penalty(what, got, _penalty(critic, points), 1e-7, _input_grad_norms(critic, points))
    expect(not got["g_grads"], f"{what}: the penalty's gradient reached the generator: detach the interpolated "
                               "points (a fresh leaf)")
    expect_array(got["weight_grad"], _weight_gradient(critic, points), f"{what}: d penalty / d D.hidden.weight "
                 "(against central differences of the penalty)", tol=1e-6)


@exercise("04_stop_gradient:gradient_penalty")
def gradient_penalty(student):
    _penalty_case(student, "gradient_penalty on samples of shape (6, 3)", (6, 3), 0, 1.0)
    _penalty_case(student, "gradient_penalty on a single sample of shape (1, 4)", (1, 4), 1, 1.7)
    _penalty_case(student, "gradient_penalty on samples of shape (5, 2, 3) (each sample a matrix)", (5, 2, 3), 2, 1.05)
    _penalty_case(student, "gradient_penalty on samples of shape (4, 2, 2, 2)", (4, 2, 2, 2), 3, 1.1)
    _penalty_case(student, "gradient_penalty with a flat critic (every norm below 1)", (5, 3), 4, 0.3)
    for weight, penalty in (([0.6, 0.8], 0.0), ([1.2, 1.6], 1.0)):
        what = f"gradient_penalty with a linear critic of weight {weight} (norm {np.hypot(*weight):g}), real = fake"
        got = student.call("gradient_penalty", _case(critic=[np.array([weight]), np.array([0.1])], real=np.ones((3, 2)),
                                                     alpha=np.ones((3, 1)), dtype="float32"), observe="penalty",
                           what=what)
        _expect_penalty(what, got, penalty, 1e-5)
