"""chibigrad on a real GPU through CuPy; skipped (with the reason) where CuPy sees none.

To run: ``pip install -r requirements-gpu.txt`` into .venv on a machine with an
NVIDIA GPU, then ``.venv/bin/python -m pytest tests/test_cuda.py -v``. The same
op table as tests/test_device.py (the simulated device) runs here on CuPy.
"""
import gc
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import chibigrad as torch
import chibigrad.nn.functional as F
from chibigrad import nn

cupy = pytest.importorskip("cupy", reason="real-CUDA tests need CuPy: pip install -r requirements-gpu.txt")
try:
    _GPUS = cupy.cuda.runtime.getDeviceCount()
except Exception:  # no driver, or a driver too old for this CuPy
    _GPUS = 0
pytestmark = pytest.mark.skipif(_GPUS == 0, reason="CuPy is installed but sees no GPU")

from test_device import (DOUBLE_BACKWARD, OPS, _compiled_training, _run, host,  # noqa: E402 - after the skip
                         select_cuda)

CUDA = torch.device("cuda:0")
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def real_cuda(monkeypatch):
    """CuPy's device, whatever CHIBIGRAD_SIMULATE_CUDA said when chibigrad was imported."""
    select_cuda(monkeypatch, "")
    assert torch.cuda.is_available() and not torch.cuda.is_simulated()


def test_tensors_live_in_cupy_arrays():
    x = torch.arange(4.0, device="cuda")
    assert type(x._array) is cupy.ndarray and x.device == CUDA and torch.cuda.device_count() == _GPUS
    assert torch.cuda.get_device_name() and repr(x) == "tensor([0., 1., 2., 3.], device='cuda:0')"
    assert x.cpu().numpy().tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(TypeError, match="^can't convert cuda:0 device type tensor to numpy"):
        x.numpy()


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_matches_the_cpu(name):
    _, out_cpu, grads_cpu = _run(name, "cpu")
    _, out, grads = _run(name, "cuda")
    assert out.device == CUDA and type(out._array) is cupy.ndarray and out.dtype is out_cpu.dtype
    np.testing.assert_allclose(host(out), host(out_cpu), rtol=1e-10, atol=1e-12)
    for g, g_cpu in zip(grads, grads_cpu):
        assert (g is None) == (g_cpu is None)
        if g is not None:
            assert type(g._array) is cupy.ndarray
            np.testing.assert_allclose(host(g), host(g_cpu), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", DOUBLE_BACKWARD)
def test_gradgradcheck_on_the_gpu(name):
    fn, shapes = OPS[name]
    torch.manual_seed(2)
    inputs = [torch.randn(*s, dtype=torch.float64, device="cuda", requires_grad=True) for s in shapes]
    assert torch.autograd.gradcheck(fn, inputs) and torch.autograd.gradgradcheck(fn, inputs)


def test_errors_on_the_gpu():
    a, b = torch.ones(2, 2, device="cuda"), torch.ones(2, 2)
    with pytest.raises(RuntimeError, match="found at least two devices, cuda:0 and cpu!$"):
        a + b
    with pytest.raises(RuntimeError, match=r"got mat2 is on cpu, .* wrapper_CUDA_mm\)$"):
        a @ b
    assert (a + torch.tensor(1.0)).device == CUDA


def test_training_step_matches_the_cpu():
    results = {}
    for device in ("cpu", "cuda"):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)).to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        x, y = torch.randn(32, 64, device=device), torch.randint(0, 10, (32,), device=device)
        for _ in range(5):
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        torch.cuda.synchronize()
        results[device] = [host(p) for p in model.parameters()]
    for p, p_cpu in zip(results["cuda"], results["cpu"]):
        np.testing.assert_allclose(p, p_cpu, rtol=1e-4, atol=1e-5)


def test_memory_counters_follow_cupy_arrays():
    gc.collect()
    start = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    x = torch.ones(1 << 20, device="cuda")
    y = x + x
    assert torch.cuda.memory_allocated() - start == 8 << 20
    del x, y
    assert torch.cuda.memory_allocated() == start and torch.cuda.max_memory_allocated() - start == 8 << 20


def test_the_numpy_calls_chibigrad_makes_on_cuda_arrays_exist_in_the_installed_cupy():
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_cupy_api.py")], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0 and "missing in CuPy: none" in result.stdout, result.stdout + result.stderr


def test_a_compiled_step_runs_cupy_code_on_the_gpu():
    step, model, losses, _ = _compiled_training("cuda", compiled=True)
    _, eager_model, eager_losses, _ = _compiled_training("cuda", compiled=False)
    assert step.compile_count == 2 and step.eager_calls == 0 and step._latest.run.__globals__["np"] is cupy
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)  # the first call was traced on the host
    for p, q in zip(model.parameters(), eager_model.parameters()):
        assert type(p._array) is cupy.ndarray
        np.testing.assert_allclose(host(p), host(q), rtol=1e-4, atol=1e-6)
