"""chibigrad.nn against PyTorch's recorded numbers (tests/fixtures/nn_goldens.json, made by
scripts/record_nn_goldens.py), plus behaviour: registration, hooks, train/eval, state_dict and the
seeds' training loops."""
import json
import math
import pathlib
import warnings

import numpy as np
import pytest

import chibigrad as torch
import chibigrad.nn as nn
import chibigrad.nn.functional as F
from chibigrad import optim
from chibigrad.nn import functional as F_from_import
from chibigrad.nn._functions import erf

GOLDENS = json.loads((pathlib.Path(__file__).parent / "fixtures" / "nn_goldens.json").read_text())
NAMESPACE = dict(torch=torch, nn=nn, F=F, optim=optim)
TOL = {"float32": dict(rtol=1e-5, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-10)}
# Through six layers with BatchNorm over 4 samples, float32 rounding reaches ~2e-5 (torch's own float32
# numbers are that far from the float64 answer too, and chibigrad's are closer).
DEEP_TOL = dict(rtol=1e-4, atol=5e-5)


def _dtype(name):
    return getattr(torch, name)


def build_module(case):
    m = eval(case["ctor"], NAMESPACE)
    if case["dtype"] == "float64":
        m.double()
    own = m.state_dict()
    m.load_state_dict({k: torch.tensor(v, dtype=own[k].dtype) for k, v in case["state"].items()})
    if case["eval"]:
        m.eval()
    return m


def build_inputs(case):
    dt = _dtype(case["dtype"])
    inputs = []
    for kind, values in zip(case["input_kinds"], case["inputs"]):
        if kind == "int":
            inputs.append(torch.tensor(values))
        else:
            inputs.append(torch.tensor(values, dtype=dt, requires_grad=kind == "float"))
    return inputs


def close(actual, expected, dtype, tol=None):
    np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64),
                               **(tol or TOL[dtype]))


@pytest.mark.parametrize("case", GOLDENS["modules"], ids=lambda c: f"{c['name']}-{c['dtype']}")
def test_module_matches_torch(case):
    m = build_module(case)
    inputs = build_inputs(case)
    out = m(*inputs)
    dt = case["dtype"]
    close(out.detach().numpy(), case["output"], dt)
    assert out.dtype is _dtype(dt)
    assert (type(out.grad_fn).__name__ if out.grad_fn else "NoneType") == case["grad_fn"]
    (out * torch.tensor(case["grad_out"], dtype=_dtype(dt))).sum().backward()
    for t, expected in zip(inputs, case["input_grads"]):
        if expected is None:
            assert t.grad is None
        else:
            close(t.grad.numpy(), expected, dt)
    grads = {k: p.grad for k, p in m.named_parameters() if p.grad is not None}
    assert grads.keys() == case["param_grads"].keys()
    deep = DEEP_TOL if case["name"] == "mlp_norm" and dt == "float32" else None
    for k, expected in case["param_grads"].items():
        close(grads[k].numpy(), expected, dt, deep)
    for k, buf in m.named_buffers():
        close(buf.numpy(), case["buffers_after"][k], dt)
    if "eval_output" in case:
        m.eval()
        with torch.no_grad():
            close(m(*inputs).numpy(), case["eval_output"], dt)


@pytest.mark.parametrize("case", GOLDENS["reprs"], ids=lambda c: c["expr"][:60])
def test_repr_matches_torch(case):
    value = eval(case["expr"], NAMESPACE)
    assert (value if isinstance(value, str) else repr(value)) == case["repr"]


NN_ERRORS = [e for e in GOLDENS["errors"] if "optim." not in e["code"] and "clip_grad" not in e["code"]]


@pytest.mark.parametrize("case", NN_ERRORS, ids=lambda c: c["code"][:60])
def test_error_matches_torch(case):
    assert_same_outcome(case)


def assert_same_outcome(case):
    """Run a snippet recorded with torch: same exception type and message, same warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(case["code"], dict(NAMESPACE))
            raised = None
        except Exception as e:  # noqa: BLE001 - comparing with whatever torch raised
            raised = e
    if case["type"] is None:
        assert raised is None
    else:
        assert type(raised).__name__ == case["type"]
        assert str(raised) == case["message"]
    assert [str(w.message) for w in caught] == case["warnings"]


# ---- Module mechanics ------------------------------------------------------------------
class TwoLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(4, 2)
        self.register_buffer("steps", torch.zeros(()))
        self.register_buffer("scratch", torch.zeros(2), persistent=False)
        self.plain = [nn.Linear(1, 1)]  # a plain list: invisible to parameters()

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def test_setattr_registers_parameters_modules_and_buffers():
    m = TwoLayer()
    assert [n for n, _ in m.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert list(m.named_parameters(recurse=False)) == []
    assert [n for n, _ in m.named_children()] == ["fc1", "act", "fc2"]
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "act", "fc2"]
    assert [n for n, _ in m.named_buffers()] == ["steps", "scratch"]
    m.extra = nn.Parameter(torch.ones(2))
    assert "extra" in dict(m.named_parameters())
    del m.extra
    assert "extra" not in dict(m.named_parameters())
    m.add_module("head", nn.Tanh())
    assert m.head is m._modules["head"]
    with pytest.raises(AttributeError, match="'TwoLayer' object has no attribute 'nope'"):
        m.nope


def test_state_dict_is_ordered_like_torch_and_detached():
    m = TwoLayer()
    sd = m.state_dict()
    assert list(sd) == ["steps", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]  # torch's order
    assert not sd["fc1.weight"].requires_grad and sd["fc1.weight"].grad_fn is None
    sd["fc1.weight"].numpy()[0, 0] = 123.0  # shares memory, as in PyTorch
    assert m.fc1.weight.detach().numpy()[0, 0] == 123.0


def test_state_dict_round_trip_gives_same_outputs():
    torch.manual_seed(1)
    a, b = TwoLayer(), TwoLayer()
    x = torch.randn(5, 3)
    assert not torch.allclose(a(x), b(x))
    result = b.load_state_dict(a.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    assert torch.equal(a(x), b(x))
    assert b.fc1.weight.is_leaf and b.fc1.weight.requires_grad


def test_shared_module_appears_once_in_parameters_but_under_both_names_in_state_dict():
    shared = nn.Linear(2, 2)
    m = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(list(m.parameters())) == 2
    assert list(m.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_zero_grad_set_to_none_and_to_zero():
    m = TwoLayer()
    m(torch.ones(2, 3)).sum().backward()
    m.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.any() for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())


def test_train_eval_propagate_and_requires_grad_freezes():
    m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(), nn.BatchNorm1d(2)))
    assert m.eval() is m
    assert not any(sub.training for sub in m.modules())
    m.train()
    assert all(sub.training for sub in m.modules())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    assert m(torch.ones(3, 2)).grad_fn is None


def test_forward_hooks_can_replace_input_and_output_and_be_removed():
    m = nn.Linear(2, 2)
    seen = []
    pre = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    post = m.register_forward_hook(lambda mod, args, out: seen.append(out.shape) or out + 1)
    out = m(torch.ones(3, 2))
    assert seen == [torch.Size([3, 2])]
    assert torch.allclose(out, (m.bias + 1).detach().expand(3, 2))
    pre.remove()
    post.remove()
    assert torch.allclose(m(torch.zeros(3, 2)), m.bias.detach().expand(3, 2))
    assert len(seen) == 1


def test_apply_visits_children_first():
    m = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU()))
    order = []
    m.apply(lambda mod: order.append(type(mod).__name__))
    assert order == ["Linear", "ReLU", "Sequential", "Sequential"]


def test_parameter_is_a_leaf_sharing_memory():
    data = torch.tensor([1.0, 2.0])
    p = nn.Parameter(data)
    assert isinstance(p, torch.Tensor) and p.is_leaf and p.requires_grad
    data.numpy()[0] = 5.0
    assert p.detach().numpy()[0] == 5.0
    assert type(p * 2) is torch.Tensor
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        nn.Parameter(torch.tensor([1, 2]))


def test_sequential_and_module_list_containers():
    layers = [nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1)]
    s = nn.Sequential(*layers)
    assert len(s) == 3 and s[0] is layers[0] and s[-1] is layers[2] and list(s) == layers
    assert list(s[1:]) == layers[1:]
    ml = nn.ModuleList(layers[:1])
    ml.append(layers[1]).extend(layers[2:])
    assert len(ml) == 3 and ml[2] is layers[2] and len(list(ml.parameters())) == 4
    with pytest.raises(IndexError, match="index 3 is out of range"):
        ml[3]


def test_linear_init_is_pytorch_uniform_and_seeded():
    torch.manual_seed(0)
    a = nn.Linear(400, 300)
    torch.manual_seed(0)
    b = nn.Linear(400, 300)
    assert torch.equal(a.weight, b.weight) and torch.equal(a.bias, b.bias)
    bound = 1 / math.sqrt(400)
    w = a.weight.detach().numpy()
    assert w.dtype == np.float32 and np.abs(w).max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound  # uniform(-b, b) has std b / sqrt(3)
    assert np.abs(a.bias.detach().numpy()).max() <= bound


def test_linear_computes_the_weight_gradient_in_the_weights_layout():
    """As PyTorch's mm backward: the gradient for weight.t() (column-major) is (grad^T @ input)^T,
    so what TBackward0 hands on to the weight is row-major, like the weight itself."""
    lin = nn.Linear(3, 2)
    out = lin(torch.randn(4, 3))
    t_node = out.grad_fn.next_functions[2][0]
    assert t_node.name() == "TBackward0"
    seen = []
    t_node.register_prehook(lambda grads: seen.append(grads[0]))
    out.sum().backward()
    (grad,) = seen
    assert grad.shape == (3, 2) and not grad.is_contiguous() and grad.t().is_contiguous()
    assert lin.weight.grad.is_contiguous()

def test_init_functions():
    w = torch.empty(20, 30)
    nn.init.xavier_uniform_(w)
    assert np.abs(w.numpy()).max() <= math.sqrt(6 / 50)
    nn.init.constant_(w, 0.5)
    assert (w.numpy() == 0.5).all()
    p = nn.Parameter(torch.empty(3, 3))
    assert nn.init.zeros_(p) is p and not p.detach().numpy().any() and p.grad_fn is None
    nn.init.normal_(p, 2.0, 0.0)
    assert (p.detach().numpy() == 2.0).all()
    assert nn.init.calculate_gain("relu") == math.sqrt(2)


# ---- functional behaviour -------------------------------------------------------------------
def test_functional_import_styles():
    assert F is F_from_import is nn.functional


def test_dropout_train_and_eval():
    torch.manual_seed(3)
    d = nn.Dropout(0.25)
    x = torch.ones(200, 100, requires_grad=True)
    y = d(x)
    values = y.detach().numpy()
    assert set(np.unique(values)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((values == 0).mean() - 0.25) < 0.02
    y.sum().backward()
    assert np.array_equal(x.grad.numpy(), values)  # the gradient goes through the same mask
    torch.manual_seed(3)
    assert torch.equal(d(x), y)  # manual_seed repeats the mask
    d.eval()
    assert d(x) is x


def test_dropout_p1_gives_zeros():
    assert not F.dropout(torch.ones(4), 1.0).any()


def test_batch_norm_eval_uses_running_stats():
    bn = nn.BatchNorm1d(2)
    x = torch.tensor([[1.0, 10.0], [3.0, 30.0]])
    bn(x)
    assert bn.num_batches_tracked.item() == 1
    assert np.allclose(bn.running_mean.numpy(), [0.2, 2.0])
    assert np.allclose(bn.running_var.numpy(), [0.9 + 0.1 * 2, 0.9 + 0.1 * 200])
    bn.eval()
    single = bn(torch.tensor([[2.0, 20.0]]))  # one sample is fine in eval mode
    expected = (np.array([2.0, 20.0]) - [0.2, 2.0]) / np.sqrt(np.array([1.1, 20.9]) + 1e-5)
    assert np.allclose(single.detach().numpy(), expected)
    assert bn.num_batches_tracked.item() == 1


def test_relu_inplace_rewrites_the_input_and_its_history():
    x = torch.tensor([-1.0, 2.0, -3.0], requires_grad=True)
    h = x * 1
    out = F.relu(h, inplace=True)
    assert out is h and h.grad_fn.name() == "ReluBackward0"
    out.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0]


def test_erf_accuracy():
    grid = np.linspace(-6, 6, 20001)
    exact = np.array([math.erf(v) for v in grid])
    assert np.array_equal(erf(grid), exact)  # float64: math.erf itself
    assert np.abs(erf(grid.astype(np.float32)) - exact).max() < 2.5e-7  # float32: Abramowitz-Stegun 7.1.26


def test_cross_entropy_is_two_nodes_like_torch():
    logits = torch.zeros(2, 3, requires_grad=True)
    loss = F.cross_entropy(logits, torch.tensor([0, 2]))
    assert loss.grad_fn.name() == "NllLossBackward0"
    assert [type(n).__name__ for n, _ in loss.grad_fn.next_functions] == ["LogSoftmaxBackward0"]
    assert abs(loss.item() - math.log(3)) < 1e-6


def test_mse_loss_warns_on_broadcasting_shapes():
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(torch.zeros(4, 1), torch.zeros(4))


# ---- gradients checked numerically, including double backward (float64) ---------------------------
def numerical_grad(f, x, eps=1e-6):
    """Central differences of the scalar f() w.r.t. every element of x."""
    flat = x.detach().numpy().reshape(-1)
    grad = np.zeros_like(flat)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        hi = f().item()
        flat[i] = old - eps
        lo = f().item()
        flat[i] = old
        grad[i] = (hi - lo) / (2 * eps)
    return grad.reshape(x.shape)


FUNCTIONS = {
    "gelu": lambda x: F.gelu(x),
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": lambda x: F.silu(x),
    "layer_norm": lambda x: F.layer_norm(x, (4,), torch.linspace(0.5, 2, 4, dtype=torch.float64),
                                         torch.linspace(-1, 1, 4, dtype=torch.float64)),
    "batch_norm": lambda x: F.batch_norm(x, None, None, torch.linspace(0.5, 2, 4, dtype=torch.float64), None,
                                         training=True),
    "cross_entropy": lambda x: F.cross_entropy(x, torch.tensor([0, 3, 1])),
    "mse": lambda x: F.mse_loss(x, torch.linspace(-1, 1, 12, dtype=torch.float64).reshape(3, 4)),
    "embedding": lambda x: F.embedding(torch.tensor([[0, 2], [2, 1]]), x),
    "bce": lambda x: F.binary_cross_entropy(x.sigmoid(), torch.linspace(0, 1, 12, dtype=torch.float64).reshape(3, 4),
                                            weight=torch.linspace(0.5, 2, 4, dtype=torch.float64)),
    "bce_logits": lambda x: F.binary_cross_entropy_with_logits(
        x, torch.linspace(0, 1, 12, dtype=torch.float64).reshape(3, 4), reduction="none",
        pos_weight=torch.linspace(0.5, 3, 4, dtype=torch.float64)),
    "bce_logits_sum": lambda x: F.binary_cross_entropy_with_logits(
        x, torch.linspace(1, 0, 12, dtype=torch.float64).reshape(3, 4), reduction="sum"),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_gradients_match_finite_differences(name):
    fn = FUNCTIONS[name]
    x = torch.tensor(np.sin(np.arange(12.0) * 1.3).reshape(3, 4) * 2, requires_grad=True)
    shape = fn(x).shape
    weights = torch.tensor(np.cos(np.arange(float(max(1, int(np.prod(shape)))))).reshape(shape))
    scalar = lambda: (fn(x) * weights).sum()  # noqa: E731
    (grad,) = torch.autograd.grad(scalar(), x, create_graph=True)
    np.testing.assert_allclose(grad.detach().numpy(), numerical_grad(scalar, x), rtol=1e-6, atol=1e-7)
    # double backward: d/dx <grad, v> against finite differences of <first derivative, v>
    v = torch.tensor(np.cos(np.arange(12.0) * 0.7).reshape(3, 4))
    if not grad.requires_grad:  # the gradient does not depend on x (embedding): second derivative 0
        second = np.zeros((3, 4))
    else:
        second = torch.autograd.grad((grad * v).sum(), x)[0].numpy()
    first = lambda: (torch.autograd.grad(scalar(), x)[0] * v).sum()  # noqa: E731
    np.testing.assert_allclose(second, numerical_grad(first, x), rtol=1e-5, atol=1e-6)


# ---- the seeds' training loops, run unchanged against chibigrad --------------------------------
def test_seed_multi_loss_shared_encoder_sums_gradients():
    torch.manual_seed(0)
    encoder, head_a, head_b = nn.Linear(10, 5), nn.Linear(5, 2), nn.Linear(5, 3)
    x = torch.randn(4, 10)
    features = encoder(x)
    loss_a, loss_b = head_a(features).mean(), head_b(features).mean()
    loss_a.backward(retain_graph=True)
    loss_b.backward()
    together = encoder.bias.grad.clone()
    separate = []
    for head in (head_a, head_b):
        encoder.zero_grad()
        head(encoder(x)).mean().backward()
        separate.append(encoder.bias.grad.clone())
    assert torch.allclose(together, separate[0] + separate[1], atol=1e-7)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        features = encoder(x)
        head_a(features).mean().backward()
        head_b(features).mean().backward()


def test_seed_gradient_accumulation_matches_the_big_batch():
    torch.manual_seed(0)
    model, criterion = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3)), nn.CrossEntropyLoss()
    data, target = torch.randn(16, 6), torch.randint(0, 3, (16,))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data, target), batch_size=4)
    accumulation_steps = 4
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accumulation_steps
        loss.backward()
    accumulated = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    criterion(model(data), target).backward()
    for acc, p in zip(accumulated, model.parameters()):
        assert torch.allclose(acc, p.grad, atol=1e-6)


def test_seed_accumulation_loop_with_clipping_runs():
    torch.manual_seed(0)
    model, criterion = nn.Linear(4, 1), nn.MSELoss()
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=4, shuffle=True)
    accumulation_steps, updates = 4, 0
    before = model.weight.clone()
    for i, (data, target) in enumerate(loader):
        loss = criterion(model(data), target) / accumulation_steps
        loss.backward()
        if (i + 1) % accumulation_steps == 0:
            total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            assert total.ndim == 0
            optimizer.step()
            optimizer.zero_grad()
            updates += 1
    assert updates == 2 and not torch.equal(before, model.weight)


def test_seed_sgd_with_zero_grad_decreases_the_loss():
    torch.manual_seed(0)
    model = nn.Linear(5, 1)
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(8, 5), torch.randn(8, 1)
    losses = []
    for step in range(3):
        optimizer.zero_grad()
        pred = model(x)
        loss = ((pred - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        f"Step {step}: loss={loss.item():.4f}, bias.grad={model.bias.grad.item():.4f}"
    assert losses[0] > losses[1] > losses[2]


def test_seed_detach_and_no_grad():
    encoder, decoder = nn.Linear(10, 5), nn.Linear(5, 10)
    x = torch.randn(4, 10)
    reconstructed = decoder(encoder(x).detach())
    ((reconstructed - x) ** 2).mean().backward()
    assert decoder.bias.grad is not None and encoder.bias.grad is None
    model = nn.Linear(10, 1)
    with torch.no_grad():
        out = model(x)
    assert not out.requires_grad and out.grad_fn is None
    assert model(x).requires_grad and not model(x).detach().requires_grad


def test_seed_module_list_model():
    class DeepModel(nn.Module):
        def __init__(self, num_layers):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(num_layers)])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    model = DeepModel(3)
    assert len(list(model.parameters())) == 6
    model(torch.randn(2, 8)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())


def test_ignored_samples_get_a_zero_gradient_printed_as_pytorch_prints_it():
    """Values and repr from PyTorch 2.13: the ignored row is 0., not -0. (which prints as -0.0000)."""
    x = torch.tensor([[1., 2., 3.], [0.5, 0.1, 0.2], [1., 1., 1.]], requires_grad=True)
    loss = F.cross_entropy(x, torch.tensor([0, -100, 2]))
    loss.backward()
    assert repr(loss) == "tensor(1.7531, grad_fn=<NllLossBackward0>)"
    assert repr(x.grad) == ("tensor([[-0.4550,  0.1224,  0.3326],\n        [ 0.0000,  0.0000,  0.0000],\n"
                            "        [ 0.1667,  0.1667, -0.3333]])")
    every_sample_ignored = F.cross_entropy(x, torch.tensor([2, 2, 2]), ignore_index=2, reduction="sum").item()
    assert math.copysign(1.0, every_sample_ignored) == 1.0 and every_sample_ignored == 0.0  # 0., not -0.


# ---- issue 16: BCE, one_hot, Flatten/Unflatten ---------------------------------------------------
@pytest.mark.parametrize("pos_weight", [None, torch.tensor([0.5, 2.0, 3.0], dtype=torch.float64)])
def test_bce_gradients_with_respect_to_the_target(pos_weight):
    """Both losses also differentiate with respect to a soft target (PyTorch's *_target_backward)."""
    x = torch.tensor([[0.2, 0.6, 0.9], [0.4, 0.5, 0.7]], dtype=torch.float64, requires_grad=True)
    t = torch.tensor([[0.1, 0.8, 0.5], [0.3, 0.9, 0.2]], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda a, b: F.binary_cross_entropy(a, b, weight=w), (x, t))
    assert torch.autograd.gradcheck(
        lambda a, b: F.binary_cross_entropy_with_logits(a, b, weight=w, pos_weight=pos_weight), (x, t))
    assert torch.autograd.gradgradcheck(
        lambda a, b: F.binary_cross_entropy_with_logits(a, b, pos_weight=pos_weight), (x, t))


def test_bce_with_logits_stays_finite_where_sigmoid_rounds_to_one():
    z = torch.tensor([-300.0, 300.0, 40.0], requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(z, torch.tensor([1.0, 0.0, 0.0]), reduction="none")
    assert loss.tolist() == [300.0, 300.0, 40.0]
    loss.sum().backward()
    assert z.grad.tolist() == [-1.0, 1.0, 1.0]
    # through a sigmoid the probabilities are exactly 0 and 1: BCE floors log at -100
    assert F.binary_cross_entropy(z.detach().sigmoid(), torch.tensor([1.0, 0.0, 0.0]), reduction="none")[:2].tolist() \
        == [100.0, 100.0]


def test_bce_modules_hold_their_weights_as_buffers():
    loss = nn.BCEWithLogitsLoss(weight=torch.tensor([1.0, 2.0]), pos_weight=torch.tensor([3.0, 1.0]))
    assert list(loss.state_dict()) == ["weight", "pos_weight"]
    assert list(nn.BCELoss().state_dict()) == []
    z, t = torch.tensor([[0.5, -1.0]]), torch.tensor([[1.0, 0.0]])
    assert torch.equal(loss(z, t), F.binary_cross_entropy_with_logits(z, t, torch.tensor([1.0, 2.0]),
                                                                       pos_weight=torch.tensor([3.0, 1.0])))


def test_one_hot_is_int64_data_on_the_indices_device():
    out = F.one_hot(torch.tensor([[0, 2], [1, 1]]))
    assert out.dtype == torch.int64 and out.shape == (2, 2, 3) and not out.requires_grad
    assert out.tolist() == [[[1, 0, 0], [0, 0, 1]], [[0, 1, 0], [0, 1, 0]]]
    assert F.one_hot(torch.tensor([1]), torch.tensor(4)).tolist() == [[0, 1, 0, 0]]


def test_flatten_and_unflatten_are_views_that_undo_each_other():
    x = torch.arange(24.0).reshape(2, 3, 4).requires_grad_()
    flat = nn.Flatten()(x)
    assert flat.shape == (2, 12) and flat.grad_fn.name() == "ViewBackward0"
    back = nn.Unflatten(1, (3, -1))(flat)
    assert back.shape == (2, 3, 4) and torch.equal(back, x)
    back.sum().backward()
    assert torch.equal(x.grad, torch.ones(2, 3, 4))
    with pytest.raises(RuntimeError, match="don't multiply up"):
        nn.Unflatten(1, (5, -1))(flat)


def _log_softmax(x):
    x = x - x.max(1, keepdims=True)
    return x - np.log(np.exp(x).sum(1, keepdims=True))


def test_cross_entropy_label_smoothing_mixes_in_the_uniform_distribution():
    logits = np.array([[0.2, -1.0, 0.5], [1.5, 0.3, -0.2], [0.0, 0.4, 0.1]])
    target = np.array([2, 0, 1])
    eps = 0.1
    logp = _log_softmax(logits)
    smoothed = np.full_like(logp, eps / 3) + (1 - eps) * np.eye(3)[target]
    expected = -(smoothed * logp).sum(1).mean()
    loss = nn.CrossEntropyLoss(label_smoothing=eps)(torch.tensor(logits), torch.tensor(target))
    np.testing.assert_allclose(loss.item(), expected, rtol=1e-12)
    probs = torch.tensor(smoothed)
    np.testing.assert_allclose(F.cross_entropy(torch.tensor(logits), probs).item(), expected, rtol=1e-12)
    x = torch.tensor(logits, requires_grad=True)
    w = torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda t: F.cross_entropy(t, torch.tensor(target), weight=w, label_smoothing=0.2),
                                    (x,))
    assert torch.autograd.gradcheck(lambda t: F.cross_entropy(t, probs, label_smoothing=0.3), (x,))
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(x, torch.tensor(target), label_smoothing=1.5)


def test_kl_div_and_cosine_similarity_values_and_gradients():
    logits, other = np.array([[0.2, -1.0, 0.5], [1.5, 0.3, -0.2]]), np.array([[0.1, 0.4, -0.3], [0.0, 2.0, 1.0]])
    p = np.exp(_log_softmax(other))
    expected = (p * (np.log(p) - _log_softmax(logits))).sum() / 2
    x = torch.tensor(_log_softmax(logits), requires_grad=True)
    np.testing.assert_allclose(nn.KLDivLoss(reduction="batchmean")(x, torch.tensor(p)).item(), expected, rtol=1e-12)
    np.testing.assert_allclose(F.kl_div(x, torch.tensor(np.log(p)), reduction="batchmean", log_target=True).item(),
                               expected, rtol=1e-12)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(x, torch.tensor(p))
    assert torch.autograd.gradcheck(lambda t: F.kl_div(t, torch.tensor(p), reduction="sum"), (x,))
    a, b = torch.tensor(logits, requires_grad=True), torch.tensor(other, requires_grad=True)
    cos = (logits * other).sum(1) / np.linalg.norm(logits, axis=1) / np.linalg.norm(other, axis=1)
    np.testing.assert_allclose(F.cosine_similarity(a, b).detach().numpy(), cos, rtol=1e-12)
    assert torch.autograd.gradcheck(F.cosine_similarity, (a, b))


def test_full_backward_hook_on_a_module_whose_inputs_need_no_grad_warns_and_sees_grad_output():
    layer = nn.Linear(2, 1)
    seen = []
    layer.register_full_backward_hook(lambda m, gin, gout: seen.append((gin, gout[0].shape)))
    out = layer(torch.ones(3, 2))
    with pytest.warns(UserWarning, match="Full backward hook is firing when gradients are computed with respect to "
                                         "module outputs since no inputs require gradients"):
        out.sum().backward()
    assert seen == [((None,), (3, 1))]


def test_metric_learning_losses_values_and_gradients():
    rng = np.random.default_rng(0)
    a, p, n = (torch.tensor(rng.normal(size=(4, 3)), requires_grad=True) for _ in range(3))
    dist = lambda x, y: np.linalg.norm(x - y + 1e-6, axis=-1)  # noqa: E731
    an, pn, nn_ = (t.detach().numpy() for t in (a, p, n))
    expected = np.maximum(dist(an, pn) - dist(an, nn_) + 1.0, 0).mean()
    np.testing.assert_allclose(nn.TripletMarginLoss()(a, p, n).item(), expected, rtol=1e-12)
    assert F.pairwise_distance(a, p).grad_fn.name() == "NormBackward1"
    target = torch.tensor([1.0, -1.0, 1.0, -1.0], dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda x, y, z: F.triplet_margin_loss(x, y, z, margin=2.0, swap=True), (a, p, n))
    assert torch.autograd.gradcheck(lambda x, y: F.cosine_embedding_loss(x, y, target, margin=-0.5), (a, p))
    assert torch.autograd.gradcheck(lambda x, y: F.margin_ranking_loss(x[:, 0], y[:, 0], target, 0.5), (a, p))
    assert torch.autograd.gradcheck(lambda x: F.hinge_embedding_loss(x[:, 0], target, margin=1.5), (a,))
    with pytest.raises(ValueError, match="expected margin to be greater than 0"):
        nn.TripletMarginWithDistanceLoss(margin=0.0)


def test_group_instance_and_rms_norm_values_and_gradients():
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.normal(size=(2, 6, 3, 2)), requires_grad=True)
    w = torch.tensor(rng.normal(size=6), requires_grad=True)
    b = torch.tensor(rng.normal(size=6), requires_grad=True)
    g = x.detach().numpy().reshape(2, 3, 2, 3, 2)
    expected = ((g - g.mean((2, 3, 4), keepdims=True)) / np.sqrt(g.var((2, 3, 4), keepdims=True) + 1e-5)).reshape(
        2, 6, 3, 2) * w.detach().numpy()[:, None, None] + b.detach().numpy()[:, None, None]
    np.testing.assert_allclose(F.group_norm(x, 3, w, b).detach().numpy(), expected, rtol=1e-10)
    assert F.group_norm(x, 3, w, b).grad_fn.name() == "NativeGroupNormBackward0"
    assert torch.autograd.gradcheck(lambda t, ww, bb: F.group_norm(t, 3, ww, bb), (x, w, b))
    small = torch.tensor(rng.normal(size=(1, 4, 2)), requires_grad=True)
    assert torch.autograd.gradgradcheck(lambda t, ww: F.group_norm(t, 2, ww), (small, w[:4].detach().requires_grad_()))
    np.testing.assert_allclose(nn.InstanceNorm2d(6)(x).detach().numpy(), F.group_norm(x, 6).detach().numpy())
    r = x.detach().numpy()
    np.testing.assert_allclose(nn.RMSNorm(2, eps=1e-6)(x).detach().numpy(),
                               r / np.sqrt((r ** 2).mean(-1, keepdims=True) + 1e-6), rtol=1e-12)
    assert torch.autograd.gradcheck(lambda t: F.rms_norm(t, (3, 2), eps=1e-6), (x,))
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(x, 4)
