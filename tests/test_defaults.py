"""torch.set_default_dtype and torch.set_default_device: what new tensors become."""
import numpy as np

import chibigrad as torch
import chibigrad.nn as nn
from chibigrad import optim


def test_a_float64_default_reaches_factories_layers_promotion_and_reprs():
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.get_default_dtype() is torch.float64
        assert torch.tensor([1.5]).dtype is torch.float64 and torch.ones(2).dtype is torch.float64
        assert torch.randn(2).dtype is torch.float64 and nn.Linear(2, 2).weight.dtype is torch.float64
        assert (torch.tensor([1, 2]) * 1.5).dtype is torch.float64  # a Python float promotes to the default
        assert torch.tensor([1, 2]).dtype is torch.int64 and torch.from_numpy(np.ones(1, np.float32)).dtype \
            is torch.float32
        assert repr(torch.tensor([1.5])) == "tensor([1.5000])"
        assert repr(torch.tensor([1.5], dtype=torch.float32)) == "tensor([1.5000], dtype=torch.float32)"
        w = torch.ones(2, requires_grad=True)
        opt = optim.Adam([w])
        w.sum().backward()
        opt.step()
        assert opt.state[w]["step"].dtype is torch.float64  # PyTorch's _get_scalar_dtype()
    finally:
        torch.set_default_dtype(torch.float32)
    assert repr(torch.tensor([1.5], dtype=torch.float64)) == "tensor([1.5000], dtype=torch.float64)"


def test_set_default_device_makes_factories_create_there(monkeypatch):
    from chibigrad import _device
    monkeypatch.setattr(_device, "SIMULATE", "1")
    monkeypatch.setattr(_device, "_cuda", [])
    monkeypatch.setattr(_device, "_DEVICES", dict(_device._DEVICES))
    monkeypatch.setattr(_device, "_MODULES", dict(_device._MODULES))
    torch.set_default_device("cuda")
    try:
        assert torch.get_default_device() == torch.device("cuda")
        assert torch.ones(2).device == torch.device("cuda:0") and torch.tensor([1.0]).device.type == "cuda"
        layer = nn.Linear(2, 2)
        assert layer.weight.device.type == "cuda" and layer(torch.ones(1, 2)).device.type == "cuda"
        assert torch.from_numpy(np.ones(2)).device.type == "cpu"  # shares the numpy array's memory
    finally:
        torch.set_default_device(None)
    assert torch.ones(1).device == torch.device("cpu")
