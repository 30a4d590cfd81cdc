"""Hidden tests of assignment 09_gpu: device-agnostic code, checked on the CPU and on CUDA (the simulated device
where there is no GPU), and a timing function scored only on a real GPU.

``GPU_ONLY`` names the exercises whose points need a real CUDA device: their check starts with
:func:`require_real_gpu`, so without one the tests cell fails with a clear message and scores 0
(``tests/test_exercises.py`` expects exactly that on a machine without a GPU)."""
import math
import statistics
import time
from collections import namedtuple

import numpy as np

import chibigrad as torch
import chibigrad.nn.functional as F
from chibigrad import nn, optim

from . import call, expect

GPU_ONLY = ("time_per_call",)
NEEDS_GPU = "needs a real CUDA device; graded on a GPU machine"


def real_gpu():
    """True when "cuda" is a real GPU (not the simulated device, not absent)."""
    return bool(torch.cuda.is_available() and not torch.cuda.is_simulated())


def require_real_gpu():
    if not real_gpu():
        here = "a simulated CUDA device" if torch.cuda.is_available() else "no CUDA device"
        raise AssertionError(f"{NEEDS_GPU} (this machine has {here}); this exercise scores 0 here")


def _devices():
    return ("cpu", "cuda")


def _host(t):
    """A tensor's values on the host as a plain float64 array (the check's own `.detach().cpu()`)."""
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64)


def _close(what, actual, expected, rtol=1e-9, atol=1e-12):
    expect(isinstance(actual, torch.Tensor), f"{what}: expected a tensor, got {type(actual).__name__}")
    a, e = _host(actual), np.asarray(expected, dtype=np.float64)
    expect(a.shape == e.shape, f"{what}: shape {a.shape}, expected {e.shape}")
    expect(np.allclose(a, e, rtol=rtol, atol=atol), f"{what}: wrong values\n got:\n{a}\n expected:\n{e}")


def _device_call(what, fn, *args):
    """``call`` that adds the hint a device error needs (the student saw it in the visible tests)."""
    try:
        return call(what, fn, *args)
    except AssertionError as err:
        text = str(err)
        if "same device" in text:
            text += ("\n--> tensors on two devices met in one operation: move every tensor to the model's device "
                     "(`t.to(device)` returns a copy; it does not move `t`)")
        elif "to numpy" in text:
            text += "\n--> `.numpy()` reads host memory only: use `.detach().cpu().numpy()`"
        raise AssertionError(text) from None


# ---- exercise 1: to_device -----------------------------------------------------------------------------------------

Point = namedtuple("Point", "x y label")


def _leaves(obj, path="batch"):
    """``(path, value)`` of every non-container inside ``obj``, in order."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from _leaves(value, f"{path}[{key!r}]")
    elif isinstance(obj, (list, tuple)):
        for k, value in enumerate(obj):
            yield from _leaves(value, f"{path}[{k}]")
    else:
        yield path, obj


def _compare_structure(what, got, want, device, path="batch"):
    """``got`` has ``want``'s structure, container types and keys; its tensors are ``want``'s on ``device``."""
    where = f"{what}: {path}"
    if isinstance(want, torch.Tensor):
        expect(isinstance(got, torch.Tensor), f"{where}: expected a tensor, got {type(got).__name__}")
        expect(got.device.type == torch.device(device).type,
               f"{where} is on {got.device}, expected {torch.device(device)}")
        expect(got.dtype == want.dtype, f"{where}: dtype {got.dtype}, expected {want.dtype} (move, don't convert)")
        expect(tuple(got.shape) == tuple(want.shape), f"{where}: shape {tuple(got.shape)}, expected "
                                                      f"{tuple(want.shape)}")
        expect(np.array_equal(_host(got), _host(want)), f"{where}: the values changed")
        return
    expect(type(got) is type(want), f"{where}: a {type(want).__name__} became a {type(got).__name__} (keep each "
                                    "container's type)")
    if isinstance(want, dict):
        expect(list(got) == list(want), f"{where}: keys {list(got)}, expected {list(want)} in that order")
        for key in want:
            _compare_structure(what, got[key], want[key], device, f"{path}[{key!r}]")
    elif isinstance(want, (list, tuple)):
        expect(len(got) == len(want), f"{where}: {len(got)} items, expected {len(want)}")
        for k, (g, w) in enumerate(zip(got, want)):
            _compare_structure(what, g, w, device, f"{path}[{k}]")
    else:
        expect(got is want, f"{where}: {want!r} is not a tensor: return it as it is (got {got!r})")


def _to_device_case(to_device, what, batch, device):
    before = [(path, value, value.device if isinstance(value, torch.Tensor) else None)
              for path, value in _leaves(batch)]
    got = _device_call(what, to_device, batch, device)
    _compare_structure(what, got, batch, device)
    after = list(_leaves(batch))
    expect(len(after) == len(before) and all(a[1] is b[1] for a, b in zip(after, before)),
           f"{what}: the batch passed in was modified; build new containers")
    for path, value, dev in before:
        if dev is not None:
            expect(value.device == dev, f"{what}: {path} of the batch passed in moved to {value.device}")
    return got


def check_to_device(to_device):
    rng = np.random.default_rng(0)

    def t(*shape, dtype=torch.float64):
        return torch.tensor(rng.standard_normal(shape)).to(dtype)

    for device in ("cuda", "cpu", torch.device("cuda"), "cuda:0", torch.device("cpu")):
        name = f"to_device(..., {device!r})"
        _to_device_case(to_device, f"{name} on one tensor", t(3), device)
        _to_device_case(to_device, f"{name} on a tuple (inputs, targets)", (t(4, 3), t(4)), device)
    for device in _devices():
        source = "cuda" if device == "cpu" else "cpu"
        name = f"to_device(..., {device!r}) from {source}"
        labels = torch.tensor(rng.integers(0, 5, 6)).to(source)
        _to_device_case(to_device, f"{name} on a list of a float and an int64 tensor", [t(2, 2).to(source), labels],
                        device)
        _to_device_case(to_device, f"{name} on a dict", {"image": t(2, 3).to(source), "mask": t(2).to(source) > 0,
                                                         "id": 17, "name": "batch 3", "meta": None}, device)
        _to_device_case(to_device, f"{name} on a namedtuple", Point(t(2).to(source), t(2).to(source), "p"), device)
        _to_device_case(to_device, f"{name} on empty containers", {"a": [], "b": (), "c": {}}, device)
        array = np.ones(3)
        _to_device_case(to_device, f"{name} with a numpy array inside (not a tensor: returned as it is)",
                        {"x": t(3).to(source), "array": array, "scale": 0.5}, device)
        nested = {"pairs": [(t(2).to(source), {"deep": [t(1).to(source), Point(None, t(3).to(source), 1)]})] * 2,
                  "step": 3, "flags": (True, t(2).to(source))}
        _to_device_case(to_device, f"{name} on containers nested 5 deep", nested, device)
        deep = t(2).to(source)
        for k in range(30):
            deep = [deep] if k % 3 == 0 else (deep, k) if k % 3 == 1 else {"next": deep}
        _to_device_case(to_device, f"{name} on containers nested 30 deep", deep, device)
    w = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    moved = _to_device_case(to_device, "to_device on a tensor that requires grad, to cuda", {"w": w}, "cuda")["w"]
    g = call("backward through to_device's copy", torch.autograd.grad, (moved * moved).sum(), [w])[0]
    _close("the gradient through to_device's copy (use .to, which autograd records)", g, [2.0, 4.0])


# ---- exercise 2: train_step ----------------------------------------------------------------------------------------

def _net(seed, device, inputs=4, outputs=3):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(inputs, 6), nn.Tanh(), nn.Linear(6, outputs)).double().to(device)


def _train_case(train_step, what, model_device, batch_device, loss_fn, targets_fn, make_opt, steps, seed):
    model, reference = _net(seed, model_device), _net(seed, "cpu")
    optimizer, ref_optimizer = make_opt(model.parameters()), make_opt(reference.parameters())
    params = list(model.parameters())
    rng = np.random.default_rng(seed)
    for step in range(steps):
        n = int(rng.integers(1, 6))
        inputs_cpu = torch.tensor(rng.standard_normal((n, 4)))
        targets_cpu = targets_fn(rng, n)
        inputs, targets = inputs_cpu.to(batch_device), targets_cpu.to(batch_device)
        where = f"{what}, step {step + 1}"
        loss = _device_call(where, train_step, model, optimizer, loss_fn, inputs, targets)
        ref_optimizer.zero_grad()
        ref_loss = loss_fn(reference(inputs_cpu), targets_cpu)
        ref_loss.backward()
        ref_optimizer.step()
        expect(isinstance(loss, float), f"{where}: returned a {type(loss).__name__}; return loss.item(), a Python "
                                        "float")
        expect(math.isclose(loss, ref_loss.item(), rel_tol=1e-9, abs_tol=1e-12),
               f"{where}: returned the loss {loss}, expected {ref_loss.item()}")
        expect(inputs.device.type == batch_device and targets.device.type == batch_device,
               f"{where}: the caller's inputs or targets changed device")
        current = list(model.parameters())
        expect(len(current) == len(params) and all(a is b for a, b in zip(current, params)),
               f"{where}: the model's parameters are not the same tensors any more")
        for (name, p), r in zip(model.named_parameters(), reference.parameters()):
            expect(p.device.type == model_device, f"{where}: {name} moved from {model_device} to {p.device}; never "
                                                  "move the model, move the batch to it")
            expect(p.grad is not None and p.grad.device.type == model_device,
                   f"{where}: {name}.grad should be on the model's device ({model_device})")
            _close(f"{where}: {name} after the step (model on {model_device})", p, _host(r))


def check_train_step(train_step):
    def regression(rng, n):
        return torch.tensor(rng.standard_normal((n, 3)))

    def classes(rng, n):
        return torch.tensor(rng.integers(0, 3, n))

    def sgd(params):
        return optim.SGD(params, lr=0.1)

    def momentum(params):
        return optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=0.01)

    def adam(params):
        return optim.Adam(params, lr=0.01)

    seed = 0
    for model_device, batch_device in (("cpu", "cpu"), ("cuda", "cpu"), ("cuda", "cuda"), ("cpu", "cuda")):
        seed += 1
        _train_case(train_step, f"train_step with the model on {model_device}, the batch on {batch_device} (SGD, "
                                "F.mse_loss)", model_device, batch_device, F.mse_loss, regression, sgd, 1, seed)
    for model_device, batch_device in (("cuda", "cpu"), ("cpu", "cpu"), ("cpu", "cuda")):
        seed += 1
        _train_case(train_step, f"train_step with the model on {model_device}, the batch on {batch_device} (SGD "
                                "with momentum, F.mse_loss, 4 steps)", model_device, batch_device, F.mse_loss,
                    regression, momentum, 4, seed)
        _train_case(train_step, f"train_step with the model on {model_device}, the batch on {batch_device} (Adam, "
                                "F.cross_entropy on int64 labels, 3 steps)", model_device, batch_device,
                    F.cross_entropy, classes, adam, 3, seed)


# ---- exercise 3: evaluate ------------------------------------------------------------------------------------------

def _evaluate_case(evaluate, what, device, sizes, loss_fn, targets_fn, seed):
    model = _net(seed, device)
    reference = _net(seed, "cpu")
    rng = np.random.default_rng(seed)
    batches = [(torch.tensor(rng.standard_normal((n, 4))), targets_fn(rng, n)) for n in sizes]
    grad_modes, handle = [], model.register_forward_hook(lambda m, a, o: grad_modes.append(torch.is_grad_enabled()))
    try:
        result = _device_call(what, evaluate, model, batches, loss_fn)
    finally:
        handle.remove()
    expect(isinstance(result, tuple) and len(result) == 2, f"{what}: returned {result!r}; return a pair "
                                                           "(mean_loss, predictions)")
    mean_loss, predictions = result
    inputs, targets = torch.cat([x for x, _ in batches]), torch.cat([y for _, y in batches])
    with torch.no_grad():
        outputs = reference(inputs)
        expected = loss_fn(outputs, targets).item()
    expect(len(grad_modes) == len(batches), f"{what}: the model ran {len(grad_modes)} times for {len(batches)} "
                                            "batches; run it once per batch")
    expect(not any(grad_modes), f"{what}: the model ran with gradients enabled; evaluate under torch.no_grad() "
                                "(no graph is needed)")
    expect(isinstance(mean_loss, float), f"{what}: mean_loss is a {type(mean_loss).__name__}; return a Python "
                                         "float (.item())")
    expect(math.isclose(mean_loss, expected, rel_tol=1e-9, abs_tol=1e-12),
           f"{what}: mean_loss {mean_loss}, expected {expected} (the mean over all {sum(sizes)} samples; batches of "
           f"{list(sizes)}: weigh each batch's mean by its size)")
    expect(type(predictions) is np.ndarray, f"{what}: predictions is a {type(predictions).__name__}; return one numpy "
                                            "array (np.concatenate of each batch's .detach().cpu().numpy())")
    want = outputs.numpy()
    expect(predictions.shape == want.shape, f"{what}: predictions of shape {predictions.shape}, expected "
                                            f"{want.shape} (all samples, in batch order)")
    expect(predictions.dtype == want.dtype, f"{what}: predictions of dtype {predictions.dtype}, expected {want.dtype}")
    expect(np.allclose(predictions, want, rtol=1e-9, atol=1e-12), f"{what}: wrong predictions\n got:\n{predictions}"
                                                                   f"\n expected:\n{want}")
    for name, p in model.named_parameters():
        expect(p.device.type == device, f"{what}: {name} moved to {p.device}; move the batches, not the model")
    for k, (x, y) in enumerate(batches):
        expect(x.device.type == "cpu" and y.device.type == "cpu", f"{what}: batch {k} of the caller changed device")


def check_evaluate(evaluate):
    def regression(rng, n):
        return torch.tensor(rng.standard_normal((n, 3)))

    def classes(rng, n):
        return torch.tensor(rng.integers(0, 3, n))

    seed = 10
    for device in _devices():
        for sizes in ((1,), (3, 3), (5, 5, 2), (2, 7, 1, 4)):
            seed += 1
            _evaluate_case(evaluate, f"evaluate with the model on {device}, batches of {list(sizes)} (F.mse_loss)",
                           device, sizes, F.mse_loss, regression, seed)
        seed += 1
        _evaluate_case(evaluate, f"evaluate with the model on {device}, batches of [4, 4, 3] (F.cross_entropy)",
                       device, (4, 4, 3), F.cross_entropy, classes, seed)


# ---- exercise 4 (GPU only): time_per_call --------------------------------------------------------------------------

def _check_counts_and_median(time_per_call, device="cpu"):
    """Host sleeps of known lengths: the number of calls, the warm-up left out, the median (device: cpu or cuda)."""
    for warmup, repeats, timed in ((2, 5, (0.004, 0.15, 0.004, 0.15, 0.004)),
                                   (3, 4, (0.004, 0.004, 0.15, 0.004)),
                                   (0, 3, (0.15, 0.004, 0.004))):
        pauses = [0.15] * warmup + list(timed)
        calls = []

        def fn():
            time.sleep(pauses[min(len(calls), len(pauses) - 1)])
            calls.append(1)

        what = f"time_per_call(fn, {device!r}, warmup={warmup}, repeats={repeats})"
        got = call(what, time_per_call, fn, device, warmup, repeats)
        expect(len(calls) == warmup + repeats, f"{what}: fn was called {len(calls)} times, expected "
                                               f"warmup + repeats = {warmup + repeats}")
        expect(isinstance(got, float), f"{what}: returned a {type(got).__name__}; return a Python float")
        median = statistics.median(timed)
        expect(median <= got < median + 0.04, f"{what}: returned {got}; the timed calls sleep {list(timed)} s "
                                              f"(after {warmup} warm-up calls of 0.15 s), their median is about "
                                              f"{median} s")


def _check_synchronised(time_per_call, work, reference, device="cuda", repeats=5):
    """``work()`` queues device work; ``reference()`` is its synchronised time (seconds). The student's median must be
    that time, not the time it takes to queue the work (a clock stopped without synchronize)."""
    what = f"time_per_call(work, {device!r}, warmup=2, repeats={repeats}) on work that keeps the GPU busy"
    truth = reference()
    got = call(what, time_per_call, work, device, 2, repeats)
    expect(isinstance(got, float), f"{what}: returned a {type(got).__name__}; return a Python float")
    expect(got >= 0.6 * truth, f"{what}: measured {got:.5f} s, but the work takes the device {truth:.5f} s: the clock "
                               "stopped before the work finished. Call torch.cuda.synchronize() before stopping it.")
    expect(got <= 5 * truth + 0.02, f"{what}: measured {got:.5f} s, but the work takes the device {truth:.5f} s "
                                    "(time each call alone, after the warm-up)")


def _gpu_work():
    """Big float32 matmuls queued on the GPU: far longer to run than to queue. Returns (work, reference)."""
    n, k = 4096, 6
    torch.manual_seed(0)
    x = torch.randn(n, n, device="cuda") / math.sqrt(n)

    def work():
        with torch.no_grad():
            y = x
            for _ in range(k):
                y = y @ x
        return y

    def reference():
        work()
        times = []
        for _ in range(3):
            torch.cuda.synchronize()
            start = time.perf_counter()
            work()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
        return min(times)

    return work, reference


def check_time_per_call(time_per_call):
    require_real_gpu()
    _check_counts_and_median(time_per_call, "cpu")
    _check_counts_and_median(time_per_call, torch.device("cuda"))
    work, reference = _gpu_work()
    _check_synchronised(time_per_call, work, reference)
