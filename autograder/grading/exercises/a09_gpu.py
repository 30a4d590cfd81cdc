"""Hidden checks of 09_gpu (device-agnostic code), run by the judge.

The student process builds each batch or model from the judge's recipe on its own devices ("cuda" is the
simulated device where there is no GPU), calls the student's function and reports what came back as data
(``cases.gpu_observe``): a result's structure with each tensor's device, dtype and values, each step's loss
and parameters, the grad mode the model ran in. The expected answers are computed here, with the full
chibigrad on the CPU.

``GPU_ONLY``: ``time_per_call`` is scored only where *this* process sees a real CUDA device. Elsewhere its
check raises :class:`~autograder.grading.judge.NotGraded`: the points are recorded as not graded (blank),
neither 0 for a right answer nor points for a GPU the student process pretends to have.
"""
import math
import statistics
import time

import numpy as np

from .. import cases
from ..judge import NotGraded, exercise, expect, expect_array

GPU_ONLY = ("time_per_call",)
NEEDS_GPU = "needs a real CUDA device; graded on a GPU machine"


def real_gpu():
    """True when the judge's own chibigrad drives a real GPU (asked here, never of the student process)."""
    import chibigrad as torch
    return bool(torch.cuda.is_available() and not torch.cuda.is_simulated())


def call(student, name, recipe, observe, what):
    """``student.call`` with the hint a device error needs (the student saw it in the visible tests)."""
    try:
        return student.call(name, {"recipe": "gpu", **recipe}, observe=observe, what=what)
    except AssertionError as err:
        text = str(err)
        if "same device" in text:
            text += ("\n--> tensors on two devices met in one operation: move every tensor to the model's device "
                     "(`t.to(device)` returns a copy; it does not move `t`)")
        elif "to numpy" in text:
            text += "\n--> `.numpy()` reads host memory only: use `.detach().cpu().numpy()`"
        raise AssertionError(text) from None


# ---- exercise 1: to_device -----------------------------------------------------------------------------------------

def tensor(rng, *shape, dtype="float64", on="cpu", grad=False):
    values = rng.integers(0, 5, shape) if dtype == "int64" else rng.standard_normal(shape)
    return {"tensor": values.astype(np.bool_) if dtype == "bool" else values, "dtype": dtype, "on": on, "grad": grad}


def expect_moved(what, got, spec, device, path="batch"):
    """``got`` (the described result) has the spec's structure and types; its tensors are the spec's on ``device``."""
    where = f"{what}: {path}"
    if "tensor" in spec:
        expect(got["kind"] == "tensor", f"{where}: expected a tensor, got {got['kind']}")
        expect(got["device"] == device, f"{where} is on {got['device']}, expected {device}")
        expect(got["dtype"] == spec["dtype"], f"{where}: dtype {got['dtype']}, expected {spec['dtype']} (move, "
                                              "don't convert)")
        values = np.asarray(spec["tensor"], dtype=np.float64)
        expect(tuple(got["shape"]) == values.shape, f"{where}: shape {tuple(got['shape'])}, expected {values.shape}")
        expect(got["values"] is not None and np.array_equal(got["values"], values), f"{where}: the values changed")
        return
    kind = next(k for k in ("dict", "list", "tuple", "point", "array", "py") if k in spec)
    if kind in ("array", "py"):
        expect(got["kind"] == "same", f"{where}: {got['repr']} is not what was passed in; something that is not a "
                                      "tensor is returned as it is")
        return
    want = {"point": "Point"}.get(kind, kind)
    expect(got.get("same_type"), f"{where}: a {want} became a {got['kind']} (keep each container's type)")
    items = spec[kind]
    if kind == "dict":
        keys = [key for key, _ in items]
        expect(got["keys"] == keys, f"{where}: keys {got['keys']}, expected {keys} in that order")
        for (key, value), item in zip(items, got["items"]):
            expect_moved(what, item, value, device, f"{path}[{key!r}]")
        return
    expect(got["len"] == len(items), f"{where}: {got['len']} items, expected {len(items)}")
    for k, (value, item) in enumerate(zip(items, got["items"])):
        expect_moved(what, item, value, device, f"{path}[{k}]")


def to_device_case(student, what, batch, device, as_device=False, grad=False):
    recipe = {"batch": batch, "device": device, "as_device": as_device, "grad": grad}
    got = call(student, "to_device", recipe, "gpu_moved", what)
    expect_moved(what, got["tree"], batch, device.split(":")[0])
    expect(not got["changed"], f"{what}: the batch passed in was modified ({', '.join(got['changed'])}); build new "
                               "containers")
    return got


@exercise("09_gpu:to_device")
def to_device(student):
    rng = np.random.default_rng(0)
    for device, as_device in (("cuda", False), ("cpu", False), ("cuda", True), ("cuda:0", False), ("cpu", True)):
        name = f"to_device(..., {'torch.device(%r)' % device if as_device else repr(device)})"
        to_device_case(student, f"{name} on one tensor", tensor(rng, 3), device, as_device)
        to_device_case(student, f"{name} on a tuple (inputs, targets)",
                       {"tuple": [tensor(rng, 4, 3), tensor(rng, 4)]}, device, as_device)
    for device in ("cpu", "cuda"):
        on = "cuda" if device == "cpu" else "cpu"
        name = f"to_device(..., {device!r}) from {on}"

        def t(*shape, dtype="float64"):
            return tensor(rng, *shape, dtype=dtype, on=on)
        to_device_case(student, f"{name} on a list of a float and an int64 tensor",
                       {"list": [t(2, 2), t(6, dtype="int64")]}, device)
        to_device_case(student, f"{name} on a dict", {"dict": [["image", t(2, 3)], ["mask", t(2, dtype="bool")],
                                                               ["id", {"py": 17}], ["name", {"py": "batch 3"}],
                                                               ["meta", {"py": None}]]}, device)
        to_device_case(student, f"{name} on a namedtuple", {"point": [t(2), t(2), {"py": "p"}]}, device)
        to_device_case(student, f"{name} on empty containers",
                       {"dict": [["a", {"list": []}], ["b", {"tuple": []}], ["c", {"dict": []}]]}, device)
        to_device_case(student, f"{name} with a numpy array inside (not a tensor: returned as it is)",
                       {"dict": [["x", t(3)], ["array", {"array": np.ones(3)}], ["scale", {"py": 0.5}]]}, device)
        pair = {"tuple": [t(2), {"dict": [["deep", {"list": [t(1), {"point": [{"py": None}, t(3), {"py": 1}]}]}]]}]}
        nested = {"dict": [["pairs", {"list": [pair, pair]}], ["step", {"py": 3}],
                           ["flags", {"tuple": [{"py": True}, t(2)]}]]}
        to_device_case(student, f"{name} on containers nested 5 deep", nested, device)
        deep = t(2)
        for k in range(30):
            deep = {"list": [deep]} if k % 3 == 0 else {"tuple": [deep, {"py": k}]} if k % 3 == 1 else \
                {"dict": [["next", deep]]}
        to_device_case(student, f"{name} on containers nested 30 deep", deep, device)
    w = {"tensor": np.array([1.0, 2.0]), "dtype": "float64", "on": "cpu", "grad": True}
    got = to_device_case(student, "to_device on a tensor that requires grad, to cuda", {"dict": [["w", w]]}, "cuda",
                         grad=True)
    expect(not isinstance(got["grad"], str), f"backward through to_device's copy raised {got['grad']}")
    expect_array(got["grad"], [2.0, 4.0], "the gradient through to_device's copy (use .to, which autograd records)",
                 tol=1e-9)


# ---- exercise 2: train_step ----------------------------------------------------------------------------------------

def weights(seed):
    rng = np.random.default_rng(1000 + seed)
    return [rng.uniform(-0.5, 0.5, shape) for shape in ((6, 4), (6,), (3, 6), (3,))]


def batches(rng, sizes, loss):
    return [(rng.standard_normal((n, 4)), rng.integers(0, 3, n) if loss == "cross_entropy" else
             rng.standard_normal((n, 3))) for n in sizes]


def reference_steps(recipe):
    """Each step's loss and the parameters after it, trained here on the CPU with the full chibigrad."""
    import chibigrad as torch
    model = cases.gpu_net(torch, torch.nn, recipe["weights"], "cpu")
    optimizer = cases.gpu_optimizer(torch, recipe["opt"], model.parameters())
    loss_fn = getattr(torch.nn.functional, f"{recipe['loss']}_loss" if recipe["loss"] == "mse" else recipe["loss"])
    steps = []
    for x, y in recipe["batches"]:
        optimizer.zero_grad()
        loss = loss_fn(model(torch.tensor(x)), cases.gpu_targets(torch, y))
        loss.backward()
        optimizer.step()
        steps.append((loss.item(), [p.detach().numpy().copy() for p in model.parameters()]))
    return steps


NAMES = ("0.weight", "0.bias", "2.weight", "2.bias")


def train_case(student, what, model_on, batch_on, loss, opt, steps, seed):
    rng = np.random.default_rng(seed)
    recipe = {"model_on": model_on, "batch_on": batch_on, "loss": loss, "opt": opt, "weights": weights(seed),
              "batches": batches(rng, [int(rng.integers(1, 6)) for _ in range(steps)], loss)}
    got = call(student, "train_step", recipe, "gpu_train", what)
    for step, (step_got, (loss_want, params)) in enumerate(zip(got, reference_steps(recipe))):
        where = f"{what}, step {step + 1}"
        expect(step_got["loss"] is not None, f"{where}: returned a {step_got['loss_type']}; return loss.item(), a "
                                             "Python float")
        expect(math.isclose(step_got["loss"], loss_want, rel_tol=1e-9, abs_tol=1e-12),
               f"{where}: returned the loss {step_got['loss']}, expected {loss_want}")
        expect(step_got["batch_devices"] == [batch_on, batch_on], f"{where}: the caller's inputs or targets changed "
                                                                  "device")
        expect(step_got["same_params"], f"{where}: the model's parameters are not the same tensors any more")
        for name, device, grad, value, want in zip(NAMES, step_got["devices"], step_got["grad_devices"],
                                                   step_got["values"], params):
            expect(device == model_on, f"{where}: {name} moved from {model_on} to {device}; never move the model, "
                                       "move the batch to it")
            expect(grad == model_on, f"{where}: {name}.grad should be on the model's device ({model_on})")
            expect_array(value, want, f"{where}: {name} after the step (model on {model_on})", tol=1e-9)


@exercise("09_gpu:train_step")
def train_step(student):
    seed = 0
    for model_on, batch_on in (("cpu", "cpu"), ("cuda", "cpu"), ("cuda", "cuda"), ("cpu", "cuda")):
        seed += 1
        train_case(student, f"train_step with the model on {model_on}, the batch on {batch_on} (SGD, F.mse_loss)",
                   model_on, batch_on, "mse", "sgd", 1, seed)
    for model_on, batch_on in (("cuda", "cpu"), ("cpu", "cpu"), ("cpu", "cuda")):
        seed += 1
        train_case(student, f"train_step with the model on {model_on}, the batch on {batch_on} (SGD with momentum, "
                            "F.mse_loss, 4 steps)", model_on, batch_on, "mse", "momentum", 4, seed)
        train_case(student, f"train_step with the model on {model_on}, the batch on {batch_on} (Adam, "
                            "F.cross_entropy on int64 labels, 3 steps)", model_on, batch_on, "cross_entropy", "adam",
                   3, seed)


# ---- exercise 3: evaluate ------------------------------------------------------------------------------------------

def evaluate_case(student, what, model_on, sizes, loss, seed):
    recipe = {"model_on": model_on, "loss": loss, "weights": weights(seed),
              "batches": batches(np.random.default_rng(seed), sizes, loss)}
    got = call(student, "evaluate", recipe, "gpu_evaluate", what)
    expect(got["pair"], f"{what}: returned {got['result']}; return a pair (mean_loss, predictions)")
    import chibigrad as torch
    model = cases.gpu_net(torch, torch.nn, recipe["weights"], "cpu")
    inputs = torch.tensor(np.concatenate([x for x, _ in recipe["batches"]]))
    targets = cases.gpu_targets(torch, np.concatenate([y for _, y in recipe["batches"]]))
    with torch.no_grad():
        outputs = model(inputs)
        loss_fn = torch.nn.functional.mse_loss if loss == "mse" else torch.nn.functional.cross_entropy
        expected = loss_fn(outputs, targets).item()
    expect(len(got["grad_modes"]) == len(sizes), f"{what}: the model ran {len(got['grad_modes'])} times for "
                                                 f"{len(sizes)} batches; run it once per batch")
    expect(not any(got["grad_modes"]) and not any(got["graphs"]),
           f"{what}: the model ran with gradients enabled; evaluate under torch.no_grad() (no graph is needed)")
    expect(got["mean"] is not None, f"{what}: mean_loss is a {got['mean_type']}; return a Python float (.item())")
    expect(math.isclose(got["mean"], expected, rel_tol=1e-9, abs_tol=1e-12),
           f"{what}: mean_loss {got['mean']}, expected {expected} (the mean over all {sum(sizes)} samples; batches of "
           f"{list(sizes)}: weigh each batch's mean by its size)")
    predictions, want = got["predictions"], outputs.numpy()
    expect(predictions is not None, f"{what}: predictions is a {got['predictions_type']}; return one numpy array "
                                    "(np.concatenate of each batch's .detach().cpu().numpy())")
    expect(predictions.shape == want.shape, f"{what}: predictions of shape {predictions.shape}, expected "
                                            f"{want.shape} (all samples, in batch order)")
    expect(predictions.dtype == want.dtype, f"{what}: predictions of dtype {predictions.dtype}, expected {want.dtype}")
    expect_array(predictions, want, f"{what}: predictions", tol=1e-9)
    for name, device in zip(NAMES, got["devices"]):
        expect(device == model_on, f"{what}: {name} moved to {device}; move the batches, not the model")
    expect(set(got["batch_devices"]) == {"cpu"}, f"{what}: a batch of the caller changed device")


@exercise("09_gpu:evaluate")
def evaluate(student):
    seed = 10
    for device in ("cpu", "cuda"):
        for sizes in ((1,), (3, 3), (5, 5, 2), (2, 7, 1, 4)):
            seed += 1
            evaluate_case(student, f"evaluate with the model on {device}, batches of {list(sizes)} (F.mse_loss)",
                          device, sizes, "mse", seed)
        seed += 1
        evaluate_case(student, f"evaluate with the model on {device}, batches of [4, 4, 3] (F.cross_entropy)",
                      device, (4, 4, 3), "cross_entropy", seed)


# ---- exercise 4 (GPU only): time_per_call --------------------------------------------------------------------------

def check_counts_and_median(student, device, as_device=False):
    """Host sleeps of known lengths: the number of calls, the warm-up left out, the median."""
    for warmup, repeats, timed in ((2, 5, (0.004, 0.15, 0.004, 0.15, 0.004)), (3, 4, (0.004, 0.004, 0.15, 0.004)),
                                   (0, 3, (0.15, 0.004, 0.004))):
        recipe = {"device": device, "as_device": as_device, "warmup": warmup, "repeats": repeats,
                  "pauses": [0.15] * warmup + list(timed)}
        what = f"time_per_call(fn, {device!r}, warmup={warmup}, repeats={repeats})"
        got = call(student, "time_per_call", recipe, "gpu_sleeps", what)
        expect(got["calls"] == warmup + repeats, f"{what}: fn was called {got['calls']} times, expected warmup + "
                                                 f"repeats = {warmup + repeats}")
        expect(got["value"] is not None, f"{what}: returned a {got['type']}; return a Python float")
        median = statistics.median(timed)
        expect(median <= got["value"] < median + 0.04,
               f"{what}: returned {got['value']}; the timed calls sleep {list(timed)} s (after {warmup} warm-up calls "
               f"of 0.15 s), their median is about {median} s")


def gpu_seconds(n, k):
    """How long k matmuls of n x n float32 take this process's GPU, synchronised (the truth, measured here)."""
    import chibigrad as torch
    torch.manual_seed(0)
    x = torch.randn(n, n, device="cuda") / math.sqrt(n)

    def work():
        with torch.no_grad():
            y = x
            for _ in range(k):
                y = y @ x
    work()
    times = []
    for _ in range(3):
        torch.cuda.synchronize()
        start = time.perf_counter()
        work()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return min(times)


@exercise("09_gpu:time_per_call")
def time_per_call(student):
    if not real_gpu():
        raise NotGraded(NEEDS_GPU)
    check_counts_and_median(student, "cpu")
    check_counts_and_median(student, "cuda", as_device=True)
    n, k, repeats = 4096, 6, 5
    what = f"time_per_call(work, 'cuda', warmup=2, repeats={repeats}) on work that keeps the GPU busy"
    got = call(student, "time_per_call", {"n": n, "k": k, "repeats": repeats}, "gpu_busy", what)
    truth = gpu_seconds(n, k)
    expect(got["value"] is not None, f"{what}: returned a {got['type']}; return a Python float")
    expect(got["value"] >= 0.6 * truth, f"{what}: measured {got['value']:.5f} s, but the work takes the device "
                                        f"{truth:.5f} s: the clock stopped before the work finished. Call "
                                        "torch.cuda.synchronize() before stopping it.")
    expect(got["value"] <= 5 * truth + 0.02, f"{what}: measured {got['value']:.5f} s, but the work takes the device "
                                             f"{truth:.5f} s (time each call alone, after the warm-up)")
