"""Devices on every machine: the simulated CUDA device stands in for a GPU.

A fixture switches chibigrad to the simulated device as ``CHIBIGRAD_SIMULATE_CUDA=1``
at import would (the CUDA backend is looked up lazily, so resetting that lookup is
the same thing) and restores it afterwards; subprocess tests check the variable
itself. Every built-in op runs forward and backward on both devices through the same
autograd code; the simulated arrays refuse host arrays, so a host/device leak in an
op fails here as it would on a GPU.
"""
import importlib
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import chibigrad as torch
import chibigrad.nn.functional as F
from chibigrad import _device, memory, nn
from chibigrad._cupy_api import CUPY_FUNCTIONS, CUPY_UFUNCS
from chibigrad._device import SimulatedCudaArray
from chibigrad.utils.checkpoint import checkpoint

ROOT = Path(__file__).resolve().parents[1]
CUDA = torch.device("cuda:0")
SAME_DEVICE = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


def select_cuda(monkeypatch, simulate):
    """Choose the CUDA backend afresh, as if CHIBIGRAD_SIMULATE_CUDA=simulate had been set before import."""
    monkeypatch.setattr(_device, "SIMULATE", simulate)
    monkeypatch.setattr(_device, "_cuda", [])
    monkeypatch.setattr(_device, "_DEVICES", dict(_device._DEVICES))
    monkeypatch.setattr(_device, "_MODULES", dict(_device._MODULES))


@pytest.fixture(autouse=True)
def simulated_cuda(monkeypatch):
    """The simulated CUDA device."""
    select_cuda(monkeypatch, "1")
    assert torch.cuda.is_available() and torch.cuda.is_simulated()


def host(t):
    return t.detach().cpu().numpy()


def on(device):
    """The device a tensor made with ``device=device`` reports (a CUDA one is always indexed)."""
    return CUDA if device == "cuda" else torch.device(device)


# ---- the environment variable -------------------------------------------------------
def run_python(code, simulate):
    env = {k: v for k, v in os.environ.items() if k != "CHIBIGRAD_SIMULATE_CUDA"}
    if simulate is not None:
        env["CHIBIGRAD_SIMULATE_CUDA"] = simulate
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("simulate", ["1", "auto"])
def test_variable_selects_the_simulated_device(simulate):
    code = ("import chibigrad as torch; x = torch.ones(2, device='cuda'); "
            "print(torch.cuda.is_available(), torch.cuda.is_simulated(), torch.cuda.get_device_name(), "
            "torch.cuda.device_count(), type(x._array).__name__); print(x)")
    result = run_python(code, simulate)
    assert result.returncode == 0, result.stderr
    if simulate == "auto" and "False" in result.stdout.split("\n")[0].split()[1]:
        pytest.skip("a real GPU answered 'auto'")
    assert result.stdout == ("True True chibigrad simulated CUDA device 1 SimulatedCudaArray\n"
                             "tensor([1., 1.], device='cuda:0')\n")


def test_without_the_variable_there_is_no_simulated_device():
    code = ("import chibigrad as torch\n"
            "if torch.cuda.is_available(): print('real GPU'); raise SystemExit\n"
            "print(torch.cuda.device_count(), torch.cuda.memory_allocated())\n"
            "for f in (lambda: torch.ones(2).cuda(), lambda: torch.zeros(2, device='cuda'), torch.cuda.synchronize):\n"
            "    try: f()\n"
            "    except AssertionError as e: print(type(e).__name__, e)\n")
    result = run_python(code, None)
    assert result.returncode == 0, result.stderr
    if result.stdout.startswith("real GPU"):
        pytest.skip("CuPy sees a GPU here")
    assert result.stdout == "0 0\n" + "AssertionError Torch not compiled with CUDA enabled\n" * 3


# ---- creation, transfers, reprs -------------------------------------------------------
CREATORS = [
    lambda d: torch.tensor([1.0, 2.0], device=d), lambda d: torch.zeros(2, 3, device=d),
    lambda d: torch.ones(2, device=d), lambda d: torch.empty(3, device=d), lambda d: torch.full((2,), 7.0, device=d),
    lambda d: torch.eye(3, device=d), lambda d: torch.arange(5, device=d), lambda d: torch.linspace(0, 1, 4, device=d),
    lambda d: torch.randn(2, 3, device=d), lambda d: torch.rand(3, device=d),
    lambda d: torch.randint(0, 9, (4,), device=d), lambda d: torch.randperm(5, device=d),
    lambda d: torch.as_tensor(np.ones(2), device=d),
]


@pytest.mark.parametrize("make", CREATORS)
def test_creation_functions_take_device_and_draw_the_same_numbers(make):
    torch.manual_seed(3)
    on_cpu = make("cpu")
    torch.manual_seed(3)
    on_cuda = make("cuda")
    assert on_cuda.device == CUDA and on_cuda.is_cuda and type(on_cuda._array) is SimulatedCudaArray
    assert on_cpu.device == torch.device("cpu") and not on_cpu.is_cuda
    assert on_cuda.dtype is on_cpu.dtype and np.array_equal(host(on_cuda), host(on_cpu))


def test_like_functions_and_new_follow_the_source_device():
    x = torch.ones(2, 3, device="cuda")
    for t in (torch.zeros_like(x), torch.ones_like(x), torch.empty_like(x), torch.full_like(x, 2.0),
              torch.randn_like(x), torch.rand_like(x), x.new_zeros(2), x.new_ones(2), x.new_tensor([1.0])):
        assert t.device == CUDA
    assert torch.zeros_like(x, device="cpu").device == torch.device("cpu")
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):
        assert torch.tensor(x).device == CUDA


def test_transfers_are_differentiable_and_gradients_come_back():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.cuda()
    assert y.device == CUDA and type(y.grad_fn).__name__ == "ToCopyBackward0"
    z = (y * y).cpu()
    assert z.device == torch.device("cpu") and z.grad_fn.name() == "ToCopyBackward0"
    z.sum().backward()
    assert x.grad.device == torch.device("cpu") and host(x.grad).tolist() == [2.0, 4.0, 6.0]
    w = torch.ones(2, device="cuda", requires_grad=True)
    (w.to("cpu", torch.float64) * 3).sum().backward()
    assert w.grad.device == CUDA and w.grad.dtype is torch.float32 and host(w.grad).tolist() == [3.0, 3.0]


def test_to_forms_and_no_ops():
    x = torch.ones(2)
    assert x.cpu() is x and x.to("cpu") is x and x.to(torch.float32) is x
    y = x.to("cuda")
    assert y.cuda() is y and y.to(CUDA) is y and y.to("cuda:0") is y and y.to(0) is y
    assert x.to(y).device == CUDA and y.to(torch.ones(1, dtype=torch.float64)).dtype is torch.float64
    assert x.to(device="cuda", dtype=torch.float64).device == CUDA
    assert x.cuda(0).device == CUDA and str(y.device) == "cuda:0" and repr(y.device) == "device(type='cuda', index=0)"
    with pytest.raises(RuntimeError, match="^CUDA error: invalid device ordinal$"):
        x.to("cuda:1")


def test_reprs_and_conversions():
    x = torch.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    assert repr(x) == "tensor([1., 2.], device='cuda:0', requires_grad=True)"
    assert repr(x * 2) == "tensor([2., 4.], device='cuda:0', grad_fn=<MulBackward0>)"
    assert repr(torch.arange(3, device="cuda")) == "tensor([0, 1, 2], device='cuda:0')"
    assert x.type() == "torch.cuda.FloatTensor" and x.tolist() == [1.0, 2.0] and x[1].item() == 2.0
    message = ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
               "memory first.")
    for f in (lambda: x.detach().numpy(), lambda: x.numpy(), lambda: np.asarray(x.detach())):
        with pytest.raises(TypeError) as err:
            f()
        assert str(err.value) == message
    assert x.detach().cpu().numpy().tolist() == [1.0, 2.0]


# ---- every built-in op, on both devices --------------------------------------------------
def _pos(x):
    return x.abs() + 0.5


OPS = {  # name: (function, input shapes)
    "add": (lambda a, b: a + b, [(2, 3), (3,)]), "sub": (lambda a, b: a - b, [(2, 3), (2, 1)]),
    "rsub": (lambda a: 2 - a, [(3,)]), "mul": (lambda a, b: a * b, [(2, 3), (2, 3)]),
    "div": (lambda a, b: a / _pos(b), [(2, 3), (3,)]), "rdiv": (lambda a: 1 / _pos(a), [(3,)]),
    "neg": (lambda a: -a, [(3,)]), "pow": (lambda a: a ** 3, [(3,)]), "pow_frac": (lambda a: _pos(a) ** 1.5, [(3,)]),
    "pow_tensor": (lambda a, b: _pos(a) ** b, [(3,), (3,)]), "rpow": (lambda a: 2 ** a, [(3,)]),
    "exp": (torch.exp, [(3,)]), "log": (lambda a: _pos(a).log(), [(3,)]), "sqrt": (lambda a: _pos(a).sqrt(), [(3,)]),
    "abs": (torch.abs, [(3,)]), "sin": (torch.sin, [(3,)]), "cos": (torch.cos, [(3,)]), "tanh": (torch.tanh, [(3,)]),
    "sigmoid": (torch.sigmoid, [(3,)]), "relu": (torch.relu, [(4,)]), "reciprocal": (lambda a: _pos(a).reciprocal(), [(3,)]),
    "clamp": (lambda a: a.clamp(-0.5, 0.5), [(5,)]), "clamp_tensor": (lambda a, b: a.clamp(min=b.detach()), [(4,), (4,)]),
    "where": (lambda a, b: torch.where(a > 0, a, b), [(4,), (4,)]), "where_scalar": (lambda a: torch.where(a > 0, a, 0.0), [(4,)]),
    "masked_fill": (lambda a: a.masked_fill(a < 0, 1.0), [(4,)]),
    "maximum": (torch.maximum, [(4,), (4,)]), "minimum": (torch.minimum, [(4,), (4,)]),
    "hypot": (torch.hypot, [(3,), (3,)]), "round": (torch.round, [(3,)]), "floor": (torch.floor, [(3,)]),
    "sign": (torch.sign, [(3,)]), "clone": (torch.clone, [(3,)]), "to_float32": (lambda a: a.to(torch.float32), [(3,)]),
    "sum": (torch.sum, [(2, 3)]), "sum_dim": (lambda a: a.sum(1, keepdim=True), [(2, 3)]),
    "mean": (torch.mean, [(2, 3)]), "mean_dim": (lambda a: a.mean(0), [(2, 3)]),
    "amax": (lambda a: a.amax(1), [(2, 3)]), "amin": (lambda a: a.amin(0), [(2, 3)]),
    "max_all": (torch.max, [(2, 3)]), "min_all": (torch.min, [(2, 3)]),
    "max_dim": (lambda a: a.max(1)[0], [(2, 3)]), "min_dim": (lambda a: a.min(0, keepdim=True)[0], [(2, 3)]),
    "prod": (torch.prod, [(2, 3)]), "prod_zero": (lambda a: (a * (a > 0)).prod(1), [(2, 3)]),
    "norm": (torch.norm, [(2, 3)]), "norm_1": (lambda a: a.norm(1, dim=1), [(2, 3)]),
    "var": (lambda a: a.var(1), [(2, 3)]), "std": (torch.std, [(2, 3)]),
    "softmax": (lambda a: a.softmax(1), [(2, 3)]), "log_softmax": (lambda a: a.log_softmax(0), [(2, 3)]),
    "logsumexp": (lambda a: a.logsumexp(1), [(2, 3)]),
    "mm": (torch.mm, [(2, 3), (3, 4)]), "bmm": (torch.bmm, [(2, 2, 3), (2, 3, 2)]),
    "matmul_nd": (torch.matmul, [(2, 2, 3), (3, 2)]), "matmul_vec": (torch.matmul, [(2, 3), (3,)]),
    "matmul_vec_mat": (torch.matmul, [(3,), (3, 2)]), "dot": (torch.matmul, [(3,), (3,)]),
    "linear": (F.linear, [(2, 3), (4, 3), (4,)]), "linear_3d": (F.linear, [(2, 2, 3), (4, 3), (4,)]),
    "reshape": (lambda a: a.reshape(3, 2), [(2, 3)]), "view": (lambda a: a.view(-1), [(2, 3)]),
    "flatten": (torch.flatten, [(2, 3)]), "squeeze": (lambda a: a.squeeze(), [(2, 1, 3)]),
    "unsqueeze": (lambda a: a.unsqueeze(0), [(3,)]), "transpose": (lambda a: a.transpose(0, 1), [(2, 3)]),
    "t": (lambda a: a.t(), [(2, 3)]), "permute": (lambda a: a.permute(2, 0, 1), [(2, 3, 4)]),
    "expand": (lambda a: a.expand(4, 3), [(1, 3)]), "index_int": (lambda a: a[1], [(2, 3)]),
    "index_slice": (lambda a: a[:, 1:], [(2, 3)]), "index_list": (lambda a: a[[0, 0, 1]], [(2, 3)]),
    "index_mask": (lambda a: a[a > 0], [(6,)]), "index_tensor": (lambda a: a[torch.tensor([2, 0, 2])], [(3,)]),
    "index_none": (lambda a: a[None], [(3,)]), "setitem": (lambda a, b: _setitem(a, b), [(3,), (2,)]),
    "cat": (lambda a, b: torch.cat([a, b], 1), [(2, 3), (2, 1)]), "stack": (lambda a, b: torch.stack([a, b]), [(3,), (3,)]),
    "split": (lambda a: a.split(1, 1)[1], [(2, 3)]), "chunk": (lambda a: a.chunk(2)[0], [(4,)]),
    "unbind": (lambda a: a.unbind(0)[1], [(2, 3)]),
    "gelu": (F.gelu, [(4,)]), "gelu_tanh": (lambda a: F.gelu(a, approximate="tanh"), [(4,)]), "silu": (F.silu, [(4,)]),
    "layer_norm": (lambda a, w, b: F.layer_norm(a, (3,), w, b), [(2, 3), (3,), (3,)]),
    "batch_norm": (lambda a, w, b: F.batch_norm(a, None, None, w, b, training=True), [(4, 3), (3,), (3,)]),
    "embedding": (lambda w: F.embedding(torch.tensor([[0, 2], [1, 1]]).to(w.device), w), [(3, 2)]),
    "cross_entropy": (lambda a: F.cross_entropy(a, torch.tensor([0, 2]).to(a.device)), [(2, 3)]),
    "nll_loss_none": (lambda a: F.nll_loss(a, torch.tensor([1, 0]).to(a.device), reduction="none"), [(2, 3)]),
    "mse_loss": (F.mse_loss, [(2, 3), (2, 3)]),
}


def _setitem(a, b):
    c = a * 1
    c[:2] = b
    return c

DOUBLE_BACKWARD = ["mul", "div", "exp", "tanh", "sigmoid", "mm", "linear", "softmax", "log_softmax", "pow_tensor"]


def _run(name, device, create_graph=False):
    fn, shapes = OPS[name]
    torch.manual_seed(1)
    inputs = [torch.randn(*s, dtype=torch.float64, device=device, requires_grad=True) for s in shapes]
    out = fn(*inputs)
    weight = torch.randn(*out.shape, dtype=out.dtype, device=device)
    grads = torch.autograd.grad((out * weight).sum(), inputs, create_graph=create_graph, allow_unused=True)
    return inputs, out, grads


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_forward_and_backward_match_the_cpu(name):
    _, out_cpu, grads_cpu = _run(name, "cpu")
    _, out, grads = _run(name, "cuda")
    assert out.device == CUDA and type(out._array) is SimulatedCudaArray
    assert out.dtype is out_cpu.dtype and out.grad_fn.name() == out_cpu.grad_fn.name()
    np.testing.assert_allclose(host(out), host(out_cpu), rtol=1e-12, atol=1e-12)
    for g, g_cpu in zip(grads, grads_cpu):
        assert (g is None) == (g_cpu is None)
        if g is not None:
            assert g.device == CUDA and type(g._array) is SimulatedCudaArray
            np.testing.assert_allclose(host(g), host(g_cpu), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", DOUBLE_BACKWARD)
def test_double_backward_matches_the_cpu(name):
    results = {}
    for device in ("cpu", "cuda"):
        inputs, _, grads = _run(name, device, create_graph=True)
        second = torch.autograd.grad(sum((g * g).sum() for g in grads), inputs, allow_unused=True)
        assert all(s is None or s.device == on(device) for s in second)
        results[device] = [None if s is None else host(s) for s in second]
    for s, s_cpu in zip(results["cuda"], results["cpu"]):
        assert (s is None) == (s_cpu is None)
        if s is not None:
            np.testing.assert_allclose(s, s_cpu, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["mul", "div", "tanh", "mm", "linear", "log_softmax", "index_list", "layer_norm",
                                  "gelu", "prod_zero", "max_dim"])
def test_gradcheck_on_the_device(name):
    fn, shapes = OPS[name]
    torch.manual_seed(2)
    inputs = [torch.randn(*s, dtype=torch.float64, device="cuda", requires_grad=True) for s in shapes]
    assert torch.autograd.gradcheck(fn, inputs)
    assert torch.autograd.gradgradcheck(fn, inputs) if name in DOUBLE_BACKWARD else True


def test_inplace_ops_on_the_device():
    x = torch.randn(4, device="cuda", requires_grad=True)
    y = x * 1
    y.add_(1).mul_(torch.full((4,), 2.0, device="cuda")).div_(2).sub_(torch.tensor(1.0)).clamp_(-1, 1)
    y[0] = 5.0
    y[torch.tensor([1])] = torch.zeros(1, device="cuda")
    y.sum().backward()
    assert y.device == CUDA and x.grad.device == CUDA
    with torch.no_grad():
        x.zero_()
        x.fill_(2.0)
        x.copy_(torch.arange(4.0))  # copy_ may copy across devices, as in PyTorch
    assert x.device == CUDA and host(x).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_copy_and_setitem_across_devices_send_gradients_home():
    src = torch.ones(2, requires_grad=True)
    dst = torch.zeros(3, device="cuda") * 1
    dst[1:] = src
    (dst * torch.arange(3.0, device="cuda")).sum().backward()
    assert src.grad.device == torch.device("cpu") and host(src.grad).tolist() == [1.0, 2.0]


# ---- mixing devices: PyTorch's errors --------------------------------------------------
def _mixed(*shape):
    return torch.ones(*shape, device="cuda"), torch.ones(*shape)


@pytest.mark.parametrize("op", [
    lambda a, b: a + b, lambda a, b: b * a, lambda a, b: a / b, lambda a, b: a ** b, lambda a, b: a < b,
    lambda a, b: a == b, lambda a, b: torch.maximum(b, a), lambda a, b: torch.where(a > 0, a, b),
    lambda a, b: torch.where(b > 0, a, a), lambda a, b: a.add_(b), lambda a, b: b.mul_(a), lambda a, b: F.mse_loss(a, b),
    lambda a, b: torch.allclose(a, b), lambda a, b: torch.hypot(a, b), lambda a, b: a.masked_fill(b > 0, 1.0),
])
def test_elementwise_mixing_is_pytorchs_error(op):
    a, b = _mixed(3)
    with pytest.raises(RuntimeError) as err:
        op(a, b)
    assert str(err.value) == SAME_DEVICE


def test_a_zero_dim_cpu_tensor_joins_a_cuda_op():
    x = torch.arange(3.0, device="cuda")
    for y in (x + torch.tensor(1.0), torch.tensor(2.0) * x, x.clamp(min=torch.tensor(0.5)),
              torch.where(x > 0, x, torch.tensor(-1.0)), x / torch.tensor(2.0, dtype=torch.float64)):
        assert y.device == CUDA
    assert (torch.ones((), device="cuda") + torch.ones(())).device == CUDA
    with pytest.raises(RuntimeError, match="found at least two devices, cuda:0 and cpu!"):
        torch.ones((), device="cuda") + torch.ones(2)


@pytest.mark.parametrize("f, message", [
    (lambda a, b: a @ b, "got mat2 is on cpu, different from other tensors on cuda:0 (when checking argument in "
                         "method wrapper_CUDA_mm)"),
    (lambda a, b: b.mm(a), "got mat2 is on cuda:0, different from other tensors on cpu (when checking argument in "
                           "method wrapper_CUDA_mm)"),
    (lambda a, b: torch.bmm(a[None], b[None]), "got mat2 is on cpu, different from other tensors on cuda:0 (when "
                                               "checking argument in method wrapper_CUDA_bmm)"),
    (lambda a, b: a @ b[0], "got vec is on cpu, different from other tensors on cuda:0 (when checking argument in "
                            "method wrapper_CUDA_mv)"),
    (lambda a, b: torch.cat([a, b]), "got tensors is on cpu, different from other tensors on cuda:0 (when checking "
                                     "argument in method wrapper_CUDA_cat)"),
    (lambda a, b: torch.stack([b, a]), "got tensors is on cuda:0, different from other tensors on cpu (when "
                                       "checking argument in method wrapper_CUDA_cat)"),
])
def test_matmul_family_and_cat_name_the_argument(f, message):
    a, b = _mixed(2, 2)
    with pytest.raises(RuntimeError) as err:
        f(a, b)
    assert str(err.value) == "Expected all tensors to be on the same device, but " + message


def test_a_cpu_batch_into_a_cuda_model():
    model = nn.Linear(3, 2).cuda()
    with pytest.raises(RuntimeError) as err:
        model(torch.ones(4, 3))
    assert str(err.value) == ("Expected all tensors to be on the same device, but got mat1 is on cpu, different "
                              "from other tensors on cuda:0 (when checking argument in method wrapper_CUDA_addmm)")
    with pytest.raises(RuntimeError, match=r"got target is on cpu, .* wrapper_CUDA_nll_loss_forward\)$"):
        F.cross_entropy(torch.ones(2, 3, device="cuda"), torch.tensor([0, 1]))
    with pytest.raises(RuntimeError, match=r"got index is on cpu, .* wrapper_CUDA__index_select\)$"):
        nn.Embedding(3, 2).cuda()(torch.tensor([0, 1]))
    with pytest.raises(RuntimeError, match=r"got weight is on cuda:0, .* tensors on cpu .*native_layer_norm\)$"):
        nn.LayerNorm(3).cuda()(torch.ones(2, 3))


def test_indexing_across_devices():
    x, idx = torch.arange(4.0), torch.tensor([3, 1])
    assert host(x.cuda()[idx]).tolist() == [3.0, 1.0]  # CPU indices are moved to the GPU
    with pytest.raises(RuntimeError) as err:
        x[idx.cuda()]
    assert str(err.value) == "indices should be either on cpu or on the same device as the indexed tensor (cpu)"


def test_backward_checks_gradients_land_on_the_input_device():
    class ToHost(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad.cpu()

    x = torch.ones(3, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError) as err:
        ToHost.apply(x).sum().backward()
    assert str(err.value) == ("Function ToHostBackward returned an invalid gradient at index 0 - expected device "
                              "cuda:0 but got cpu")
    y = torch.ones((), device="cuda", requires_grad=True)
    ToHost.apply(y).backward()  # a 0-dim gradient is moved, as in PyTorch
    assert y.grad.device == CUDA and y.grad.item() == 1.0
    with pytest.raises(RuntimeError) as err:
        (x * 2).backward(torch.ones(3))
    assert str(err.value) == "invalid gradient at index 0 - expected device cuda:0 but got cpu"


def test_a_hook_may_not_change_the_device():
    def to_cpu(grad):
        return grad.cpu()

    x = torch.ones(3, device="cuda", requires_grad=True)
    x.register_hook(to_cpu)
    with pytest.raises(RuntimeError) as err:
        (x * 2).sum().backward()
    assert str(err.value) == "hook 'to_cpu' has changed the type of value (was torch.cuda.FloatTensor got torch.FloatTensor)"
    y = x * 1
    y.register_hook(lambda g: g.double())
    with pytest.raises(RuntimeError, match=r"^hook '<lambda>' has changed the type of value \(was torch\.cuda\.FloatTensor "
                                           r"got torch\.cuda\.DoubleTensor\)$"):
        y.sum().backward()


def test_the_simulated_array_refuses_host_arrays():
    x = torch.ones(3, device="cuda")._array
    for leak in (lambda: x + np.zeros(3), lambda: np.exp(np.ones(3)) * x, lambda: np.concatenate([x, np.ones(2)]),
                 lambda: np.where(np.ones(3) > 0, x, x), lambda: x.__setitem__(slice(None), np.ones(3))):
        with pytest.raises(TypeError, match="a host \\(CPU\\) array met an array on the simulated CUDA device"):
            leak()
    assert type(x + 1) is SimulatedCudaArray and type(x.sum()) is SimulatedCudaArray and type(x[0]) is SimulatedCudaArray
    assert type(_device.array_module(x).arange(3)) is SimulatedCudaArray


def test_the_simulated_array_refuses_what_cupy_refuses():
    """numpy's own TypeErrors, as a CuPy array's __array_ufunc__/__array_function__ cause them."""
    x = torch.ones(3, device="cuda")._array
    refused_ufunc = "operand type\\(s\\) all returned NotImplemented from __array_ufunc__"
    for call in (lambda: np.vectorize(math.erf, otypes=[float])(x), lambda: np.frompyfunc(math.erf, 1, 1)(x),
                 lambda: np.add.at(x, [0, 0], 1.0), lambda: np.add.at(x, (slice(1, None),), x[:2]),
                 lambda: np.spacing(x), lambda: np.add(x, [1.0, 2.0, 3.0])):
        with pytest.raises(TypeError, match=refused_ufunc):
            call()
    with pytest.raises(TypeError, match="^no implementation found for 'numpy.block' on types that implement "
                                        "__array_function__"):
        np.block([x, x])
    with pytest.raises(AttributeError, match="^module 'cupy' has no attribute 'block'"):
        _device.array_module(x).block
    np.add.at(x, np.zeros(2, dtype=np.int64).view(SimulatedCudaArray), 1.0)  # array indices: CuPy takes them
    _device.array_module(x).add.at(x, [1, 1], 1.0)  # cupy.add.at takes any index
    assert x.view(np.ndarray).tolist() == [3.0, 3.0, 1.0]


def test_the_list_of_numpy_calls_names_real_numpy_functions():
    """Every entry of chibigrad._cupy_api names a numpy function or ufunc (scripts/check_cupy_api.py
    checks them against CuPy; tests/test_cuda.py runs it where CuPy is installed)."""
    ufunc_names = {f.__name__ for f in vars(np).values() if isinstance(f, np.ufunc)}
    assert CUPY_UFUNCS <= ufunc_names
    for qualified in CUPY_FUNCTIONS:
        module, name = qualified.rsplit(".", 1)
        func = getattr(importlib.import_module(module), name)
        assert callable(func) and not isinstance(func, (np.ufunc, type)), qualified


# ---- modules, optimizers, checkpointing -------------------------------------------------
def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.25), nn.Linear(8, 3), nn.LayerNorm(3))


def test_module_to_moves_parameters_buffers_and_grads_in_place():
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    params = list(model.parameters())
    model(torch.randn(4, 3)).sum().backward()
    assert model.cuda() is model and list(model.parameters()) == params
    for t in list(model.parameters()) + list(model.buffers()):
        assert t.device == CUDA
    assert all(p.grad.device == CUDA for p in params) and isinstance(params[0], nn.Parameter)
    assert model[1].num_batches_tracked.dtype is torch.int64
    model.to(torch.float64)
    assert params[0].dtype is torch.float64 and model[1].num_batches_tracked.dtype is torch.int64
    model.to("cpu")
    assert all(p.device == torch.device("cpu") for p in params)


@pytest.mark.parametrize("make_optimizer", [
    lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    lambda p: torch.optim.Adam(p, lr=0.01, amsgrad=True), lambda p: torch.optim.AdamW(p, lr=0.01),
])
def test_training_on_the_device_matches_the_cpu(make_optimizer):
    results = {}
    for device in ("cpu", "cuda"):
        model = _mlp().to(device)
        optimizer = make_optimizer(model.parameters())
        torch.manual_seed(5)
        x, y = torch.randn(6, 4, device=device), torch.randint(0, 3, (6,), device=device)
        for _ in range(3):
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
        for p in model.parameters():
            assert p.device == p.grad.device == on(device)
            for key, value in optimizer.state[p].items():
                if isinstance(value, torch.Tensor):
                    assert value.device == (torch.device("cpu") if key == "step" else on(device))
        results[device] = [host(p) for p in model.parameters()]
    for p, p_cpu in zip(results["cuda"], results["cpu"]):
        np.testing.assert_allclose(p, p_cpu, rtol=1e-5, atol=1e-6)


def test_optimizer_state_loads_onto_the_parameters_device():
    model = nn.Linear(2, 1)
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.ones(1, 2)).sum().backward()
    optimizer.step()
    model.cuda()
    moved = torch.optim.Adam(model.parameters())
    moved.load_state_dict(optimizer.state_dict())
    assert moved.state[model.weight]["exp_avg"].device == CUDA
    assert moved.state[model.weight]["step"].device == torch.device("cpu")


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_replays_dropout_on_the_device(use_reentrant):
    def block(h):
        return F.dropout(torch.tanh(h @ w), 0.5)

    torch.manual_seed(0)
    w = torch.randn(4, 4, device="cuda", requires_grad=True)
    x = torch.randn(3, 4, device="cuda", requires_grad=True)
    torch.manual_seed(9)
    block(x).sum().backward()
    expected = host(x.grad), host(w.grad)
    x.grad = w.grad = None
    torch.manual_seed(9)
    checkpoint(block, x, use_reentrant=use_reentrant).sum().backward()
    assert x.grad.device == w.grad.device == CUDA
    np.testing.assert_array_equal(host(x.grad), expected[0])
    np.testing.assert_array_equal(host(w.grad), expected[1])


# ---- the cuda module and memory ----------------------------------------------------------
def test_cuda_module():
    assert torch.cuda.device_count() == 1 and torch.cuda.current_device() == 0
    assert torch.cuda.get_device_name() == "chibigrad simulated CUDA device"
    torch.cuda.synchronize()
    torch.cuda.manual_seed(4)
    a = torch.randn(3, device="cuda")
    torch.cuda.manual_seed_all(4)
    assert host(torch.randn(3, device="cuda")).tolist() == host(a).tolist()


def test_cuda_memory_counters_are_exact():
    import gc
    gc.collect()
    start, start_all = torch.cuda.memory_allocated(), memory.allocated()
    torch.cuda.reset_peak_memory_stats()
    x = torch.ones(1000, device="cuda")
    view = x[10:]
    assert torch.cuda.memory_allocated() - start == 4000 and memory.allocated() - start_all == 4000
    y = x + x
    host_copy = y.cpu()
    assert torch.cuda.memory_allocated() - start == 8000 and memory.allocated() - start_all == 12000
    del x, view
    assert torch.cuda.memory_allocated() - start == 4000 and torch.cuda.max_memory_allocated() - start == 8000
    torch.cuda.reset_peak_memory_stats()
    assert torch.cuda.max_memory_allocated() == torch.cuda.memory_allocated()
    del y, host_copy
    assert torch.cuda.memory_allocated() == start and memory.allocated() == start_all


def test_saved_tensor_bytes_on_the_device():
    x = torch.ones(100, device="cuda", requires_grad=True)
    with memory.measure() as m:
        y = (x * x).exp()
    assert m.saved_kept == 800  # x (once, for both operands) and exp's output
    y.sum().backward()
    assert memory.saved() <= memory.max_saved()


def test_changes_through_views_rewrite_history_on_the_device():
    a = torch.tensor([1., 2., 3.], requires_grad=True, device="cuda")
    x = a * 2
    x[0] += 1  # CopySlices (its positions live on the device)
    x[1:].mul_(3)
    v = x.view(3, 1)
    x.add_(1)  # v's grad_fn is made again: AsStridedBackward0
    (v * v).sum().backward()
    assert type(v.grad_fn).__name__ == "AsStridedBackward0"
    assert a.grad.device == CUDA and a.grad.tolist() == [16., 156., 228.]
    assert type(a.grad._array) is SimulatedCudaArray


def test_save_on_cpu_keeps_saved_activations_on_the_host_until_backward():
    """autograd.graph.save_on_cpu: the nodes hold host copies; backward gets them back on the device."""
    from chibigrad.autograd.graph import save_on_cpu
    w = torch.tensor([[0.5, -1.0], [2.0, 0.25]], device="cuda", requires_grad=True)
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device="cuda")
    with save_on_cpu():
        y = (x @ w).tanh()
    packed = [s._packed for s in y.grad_fn._saved + y.grad_fn.next_functions[0][0]._saved if s is not None]
    assert packed and all(device == CUDA and type(t._array) is np.ndarray for device, t in packed)
    y.sum().backward()
    expected = torch.tensor([[1.0, 2.0], [3.0, 4.0]]).t() @ (1 - (torch.tensor([[1.0, 2.0], [3.0, 4.0]])
                                                                 @ host_tensor(w)).tanh() ** 2)
    assert w.grad.device == CUDA and np.allclose(host(w.grad), expected.numpy())


def host_tensor(t):
    return torch.tensor(host(t))


# ---- chibigrad.compile on the device -----------------------------------------------------
def _compiled_training(device, compiled, steps=4, momentum=0.9):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 64), nn.ReLU(), nn.Linear(64, 3)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=momentum)
    x, y = torch.randn(32, 4, device=device), torch.randint(0, 3, (32,), device=device)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    run = torch.compile(step) if compiled else step
    losses = [host(run(x, y)).item() for _ in range(steps)]
    return run, model, losses, (x, y)


def test_a_compiled_step_runs_on_the_device_bitwise_as_eager():
    step, model, losses, _ = _compiled_training("cuda", compiled=True)
    _, eager_model, eager_losses, _ = _compiled_training("cuda", compiled=False)
    assert step.compile_count == 2 and step.eager_calls == 0  # again once the momentum buffers exist
    assert losses == eager_losses
    for p, q in zip(model.parameters(), eager_model.parameters()):
        assert type(p._array) is SimulatedCudaArray and type(p.grad._array) is SimulatedCudaArray
        assert np.array_equal(host(p), host(q)) and np.array_equal(host(p.grad), host(q.grad))
    generated = step._latest.run.__globals__  # np is the device's module; constants and buffers live there
    assert generated["np"] is _device.cuda_backend().xp and "np.matmul(" in step.code and "buf_" in step.code
    arrays = [v for v in generated.values() if isinstance(v, np.ndarray)]
    assert arrays and all(type(a) is SimulatedCudaArray for a in arrays)


def test_a_compiled_step_guards_the_device():
    step, model, _, (x, y) = _compiled_training("cuda", compiled=True, steps=3, momentum=0.0)
    assert step.compile_count == 2 and step.eager_calls == 0  # again once the gradients exist
    x_cpu = x.cpu()
    with pytest.raises(RuntimeError, match="^Expected all tensors to be on the same device"):
        step(x_cpu, y)  # the guard sees a host array: traced again, the devices differ, so eager says why
    assert step.compile_count == 3
    assert step.recompile_reasons[-1] == "x: tensor shape (32, 4) float32 on cuda:0 -> tensor shape (32, 4) float32"
    assert step._latest.eager_reason == "the step's tensors are on cpu and cuda:0; it runs eagerly"
    model.to("cpu")
    loss = step(x_cpu, y.cpu())  # all on the CPU: compiled again, numpy code
    assert loss.device == torch.device("cpu") and step._latest.run.__globals__["np"] is np
