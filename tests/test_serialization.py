"""torch.save / torch.load: what round-trips, what the file holds, and what weights_only refuses."""
import io
import json
import pickle
import zipfile

import numpy as np
import pytest

import chibigrad as torch
import chibigrad.nn as nn
from chibigrad import optim


class Holder:
    """A plain object with a tensor inside: saved by pickling, loaded only with weights_only=False."""

    def __init__(self, t):
        self.t = t


def round_trip(obj, **load_args):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, **load_args)


@pytest.mark.parametrize("t", [
    torch.tensor([[1.5, -2.0], [0.0, 3.25]]), torch.tensor(7), torch.tensor([True, False]),
    torch.arange(6, dtype=torch.int32).reshape(3, 2).t(), torch.tensor([1.0, 2.0], dtype=torch.float16),
    torch.tensor([[1e-30, float("inf")], [float("nan"), -0.0]], dtype=torch.float64), torch.zeros(0, 3),
    torch.tensor([0.1, 0.2], requires_grad=True)], ids=lambda t: f"{t.dtype}{tuple(t.shape)}")
def test_tensors_keep_dtype_shape_values_and_requires_grad(t):
    back = round_trip(t)
    assert back.dtype == t.dtype and back.shape == t.shape and back.requires_grad == t.requires_grad
    assert back.is_leaf and back.grad_fn is None
    np.testing.assert_array_equal(back.detach().numpy(), t.detach().numpy())


def test_a_non_leaf_loads_as_a_leaf_that_requires_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    back = round_trip(x * 3)
    assert back.is_leaf and back.requires_grad and back.tolist() == [3.0, 6.0]


def test_containers_keys_and_plain_values_round_trip(tmp_path):
    obj = {"a": [1, 2.5, None, "s", True], "t": (1, (2, 3)), 0: {"nested": torch.ones(2)},
           (1, "k"): "tuple key", "dtype": torch.int64, "size": torch.Size([2, 3]), "dev": torch.device("cpu"),
           "big": 2 ** 70, "nan": float("nan")}
    path = tmp_path / "obj.pt"
    torch.save(obj, path)
    back = torch.load(str(path))
    assert list(back) == list(obj) and type(back) is dict
    assert back["a"] == obj["a"] and back["t"] == obj["t"] and back[(1, "k")] == "tuple key"
    assert back["dtype"] is torch.int64 and back["size"] == torch.Size([2, 3]) and repr(back["size"]) == \
        "torch.Size([2, 3])"
    assert back["dev"] == torch.device("cpu") and back["big"] == 2 ** 70 and back["nan"] != back["nan"]
    assert torch.equal(back[0]["nested"], torch.ones(2))


def test_a_shared_tensor_is_stored_once_and_loads_as_one_object():
    w = nn.Parameter(torch.ones(3))
    buffer = io.BytesIO()
    torch.save({"a": w, "b": [w, w.detach()]}, buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
        assert sorted(archive.namelist()) == ["data.json", "tensors/0.npy", "tensors/1.npy"]
        structure = json.loads(archive.read("data.json"))
    assert structure["format"] == "chibigrad-save-1"
    buffer.seek(0)
    back = torch.load(buffer)
    assert back["a"] is back["b"][0] and isinstance(back["a"], nn.Parameter) and back["a"].requires_grad
    assert type(back["b"][1]) is torch.Tensor and not back["b"][1].requires_grad


def test_model_and_optimizer_state_dicts_resume_training_exactly(tmp_path):
    def make():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))
        return model, optim.Adam(model.parameters(), lr=0.01, amsgrad=True)

    x, y = torch.linspace(-1, 1, 15).reshape(5, 3), torch.linspace(0, 1, 5).reshape(5, 1)

    def train(model, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()

    model, opt = make()
    train(model, opt, 3)
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3}, tmp_path / "ckpt.pt")
    train(model, opt, 2)
    resumed, resumed_opt = make()
    checkpoint = torch.load(tmp_path / "ckpt.pt", weights_only=True)
    resumed.load_state_dict(checkpoint["model"])
    resumed_opt.load_state_dict(checkpoint["optimizer"])
    assert checkpoint["epoch"] == 3 and list(checkpoint["optimizer"]["state"]) == [0, 1, 2, 3, 4, 5]
    assert checkpoint["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.999)
    train(resumed, resumed_opt, 2)
    for a, b in zip(model.state_dict().values(), resumed.state_dict().values()):
        assert torch.equal(a, b)


def test_other_objects_need_weights_only_false():
    t = torch.tensor([1.0, 2.0])
    buffer = io.BytesIO()
    torch.save({"holder": Holder(t), "t": t}, buffer)
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL test_serialization.Holder was not an allowed global"):
        torch.load(buffer)
    buffer.seek(0)
    back = torch.load(buffer, weights_only=False)
    assert isinstance(back["holder"], Holder) and back["holder"].t is back["t"]  # the tensor is shared, not copied
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
        assert "objects/0.pkl" in archive.namelist() and "tensors/0.npy" in archive.namelist()


def test_a_whole_module_can_be_saved_and_loaded_when_trusted():
    model = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
    back = round_trip(model, weights_only=False)
    x = torch.tensor([[0.5, -1.0]])
    assert torch.equal(back(x), model(x)) and isinstance(back[0].weight, nn.Parameter)


def test_files_chibigrad_did_not_write_are_refused(tmp_path):
    with pytest.raises(RuntimeError, match="Invalid file"):
        torch.load(io.BytesIO(b"not a zip"))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:  # the layout of a file from PyTorch's torch.save
        archive.writestr("archive/data.pkl", b"")
    buffer.seek(0)
    with pytest.raises(RuntimeError, match="written by PyTorch's torch.save"):
        torch.load(buffer)
    with pytest.raises(FileNotFoundError):
        torch.load(tmp_path / "missing.pt")
    with pytest.raises(RuntimeError, match="Parent directory .* does not exist."):
        torch.save(torch.ones(1), tmp_path / "no" / "x.pt")


def test_map_location_moves_tensors_to_a_device():
    back = round_trip({"t": torch.ones(2)}, map_location="cpu")
    assert back["t"].device == torch.device("cpu")
    back = round_trip(torch.ones(2), map_location=torch.device("cpu"))
    assert back.device.type == "cpu"
    back = round_trip([torch.ones(2)], map_location=lambda storage, loc: storage)  # an old idiom for "on the CPU"
    assert back[0].device.type == "cpu" and back[0].tolist() == [1.0, 1.0]
    assert round_trip(torch.ones(1), map_location={"cuda:0": "cpu"}).device.type == "cpu"


def test_a_cuda_checkpoint_on_a_machine_without_cuda_needs_map_location(monkeypatch):
    from chibigrad import _device
    monkeypatch.setattr(_device, "SIMULATE", "")  # no CUDA at all (CuPy is not looked for: _find_cupy is bypassed)
    monkeypatch.setattr(_device, "_cuda", [None])
    with pytest.raises(RuntimeError, match=r"Attempting to deserialize object on a CUDA device but "
                                           r"torch.cuda.is_available\(\) is False"):
        round_trip(torch.ones(1), map_location="cuda")


def test_cuda_tensors_load_on_cuda_or_where_map_location_says(monkeypatch):
    from chibigrad import _device
    monkeypatch.setattr(_device, "SIMULATE", "1")  # the simulated CUDA device (see tests/test_device.py)
    monkeypatch.setattr(_device, "_cuda", [])
    monkeypatch.setattr(_device, "_DEVICES", dict(_device._DEVICES))
    monkeypatch.setattr(_device, "_MODULES", dict(_device._MODULES))
    t = torch.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    back = round_trip({"t": t})["t"]
    assert back.device == torch.device("cuda:0") and back.requires_grad and back.tolist() == [1.0, 2.0]
    assert round_trip(t, map_location="cpu").device == torch.device("cpu")
    assert round_trip(torch.ones(1), map_location="cuda").device == torch.device("cuda:0")
    assert round_trip(t, map_location={"cuda:0": "cpu"}).device == torch.device("cpu")
    assert round_trip(t, map_location=lambda storage, loc: storage.cuda()).device == torch.device("cuda:0")

