# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader="readonly" id="intro"
# # Assignment 09: code that runs on any device
#
# Chapter 9 (optional) in five lines:
#
# - A tensor lives on one device (`t.device`); `t.to(device)`, `.cuda()`, `.cpu()` return a **copy** on the
#   other device and leave `t` where it was. `model.to(device)` is different: it moves the parameters in place.
# - Every operation needs all its tensors on one device. Mixing is PyTorch's `RuntimeError: Expected all
#   tensors to be on the same device, ...` (a 0-dim CPU tensor is the one exception: it counts as a number).
# - So write code that asks where the model is, `next(model.parameters()).device`, and moves the *data*
#   there, instead of code that says `"cuda"`: the same function then runs on a laptop and on a GPU.
# - Numbers leave the device with `.item()`, arrays with `.detach().cpu().numpy()`: `.numpy()` only knows host
#   memory.
# - A GPU runs asynchronously: a call returns when the work is *queued*. Time it with
#   `torch.cuda.synchronize()` before starting and before stopping the clock, after a warm-up.
#
# **Two devices.** The setup cell sets `CHIBIGRAD_SIMULATE_CUDA=auto` before importing chibigrad: on a
# machine without a GPU, `"cuda"` is then a *simulated* CUDA device (numpy arrays that refuse to be mixed with
# host arrays, exactly as a real GPU refuses), on a machine with a GPU it is the real one. Exercises 1-3 are
# tested on both `"cpu"` and `"cuda"`: a `.to(device)` you forget fails here as it would on a GPU.
#
# **The GPU-only part.** Exercise 4 measures time on a real GPU, which a simulated device cannot show. Its
# visible tests run anywhere, but its points are given only when the notebook is graded on a machine with a
# real GPU (the course grades this assignment on one). Without one, its tests cell says "NOT GRADED HERE: needs
# a real CUDA device; graded on a GPU machine" and its points are left blank: not 0 for a right answer, never
# points for a measurement that was not made.
#
# Write your code where a cell says `raise NotImplementedError("Exercise ...")` (delete that line). The cell
# after each solution runs visible tests: no output means they pass. Grading adds hidden tests (other models,
# nested batches, momentum, uneven batches). Each exercise is graded on its own: don't call one exercise's
# solution from another.

# %% nbgrader="readonly" id="setup"
import os

os.environ.setdefault("CHIBIGRAD_SIMULATE_CUDA", "auto")  # before chibigrad is imported: see above

import time
from collections import namedtuple

import numpy as np

import chibigrad as torch
import chibigrad.nn.functional as F
from chibigrad import nn, optim

import chibigrad.tracebacks

chibigrad.tracebacks.install()  # errors read as in PyTorch: your frames and the message, not chibigrad's

DEVICES = ("cpu", "cuda")
REAL_GPU = torch.cuda.is_available() and not torch.cuda.is_simulated()
print("cuda is", torch.cuda.get_device_name() if torch.cuda.is_available() else "not available")


def host(v):
    """A tensor's values as a float64 numpy array on the host (numbers and arrays pass through)."""
    return np.asarray(v.detach().cpu().numpy() if isinstance(v, torch.Tensor) else v, dtype=np.float64)


def close(a, b, tol=1e-6):
    """True when tensors (on any device), arrays or numbers a and b have the same shape and values."""
    a, b = host(a), host(b)
    return a.shape == b.shape and np.allclose(a, b, rtol=tol, atol=tol)


def run(what, fn, *args, **kwargs):
    """fn(*args, **kwargs); PyTorch's device errors become a message that says what to fix."""
    try:
        return fn(*args, **kwargs)
    except RuntimeError as err:
        if "same device" not in str(err):
            raise
        raise AssertionError(f"{what}: {err}\n--> two tensors on different devices met in one operation. Move "
                             "every tensor to the model's device; `t.to(device)` returns a copy, it does not move "
                             "`t`.") from None
    except TypeError as err:
        if "to numpy" not in str(err):
            raise AssertionError(f"{what}: expected a result, got TypeError: {err}") from None
        raise AssertionError(f"{what}: {err}\n--> `.numpy()` reads host memory only: "
                             "use `.detach().cpu().numpy()`.") from None


def make_model(device, seed=0):
    """A small network (3 inputs, 2 outputs) on `device`."""
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2)).to(device)

# %% [markdown] nbgrader="readonly" id="to_device-text"
# ## Exercise 1: move a whole batch (2 points)
#
# Data loaders give batches in containers: a tuple `(inputs, targets)`, a dict of named tensors, a list of
# them, a `namedtuple`, nested in each other. Write `to_device(batch, device)` that returns the same structure
# with every tensor moved to `device` (a string or a `torch.device`):
#
# - a tensor becomes `tensor.to(device)`;
# - a `dict` becomes a `dict` with the same keys (in the same order); a `list` a `list`; a `tuple` a `tuple`
#   and a namedtuple the same namedtuple type (`type(batch)(*items)`: a namedtuple takes its fields as
#   arguments, `tuple` takes one iterable; `hasattr(batch, "_fields")` tells them apart);
# - containers are walked recursively, at any depth;
# - anything else (numbers, strings, `None`, numpy arrays) is returned as it is;
# - `batch` itself is not modified: build new containers.

# %% nbgrader="solution" id="to_device"
def to_device(batch, device):
    """The same nested structure (dict, list, tuple, namedtuple) with every tensor on `device`."""
    ### BEGIN SOLUTION
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {key: to_device(value, device) for key, value in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(to_device(item, device) for item in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(item, device) for item in batch)
    return batch
    ### END SOLUTION

# %% nbgrader="tests" id="to_device-tests" points=2
# Exercise 09.to_device: the visible tests (no output: they pass; grading adds hidden tests)
Pair = namedtuple("Pair", "x y")
batch = {"inputs": torch.ones(2, 3), "extra": [torch.zeros(2), (torch.arange(3), "label", 7)],
         "pair": Pair(torch.ones(1), None)}
for device in DEVICES:
    moved = run(f"to_device(batch, {device!r})", to_device, batch, device)
    assert isinstance(moved, dict) and list(moved) == ["inputs", "extra", "pair"], f"a dict with the same keys: {moved}"
    assert moved["inputs"].device.type == device, f"moved['inputs'] is on {moved['inputs'].device}, not {device}"
    assert isinstance(moved["extra"], list) and isinstance(moved["extra"][1], tuple), "lists stay lists, tuples tuples"
    assert moved["extra"][1][0].device.type == device, f"nested tensors move too: {moved['extra'][1][0].device}"
    kept = moved["extra"][1][1:]
    assert [type(v) for v in kept] == [str, int] and kept == ("label", 7), \
        f"strings and numbers are returned as they are: expected ('label', 7), got {kept!r}"
    assert isinstance(moved["pair"], Pair) and moved["pair"].y is None, f"a namedtuple stays one: {moved['pair']!r}"
    assert moved["pair"].x.device.type == device and close(moved["pair"].x, [1.0]), "the namedtuple's tensor moves"
assert batch["inputs"].device.type == "cpu", "the original batch is not modified"
back = to_device(to_device(batch, "cuda"), torch.device("cpu"))
assert back["extra"][0].device.type == "cpu" and close(back["extra"][1][0], [0, 1, 2]), "and back to the CPU"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a09_gpu.py, to_device
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="train_step-text"
# ## Exercise 2: a training step for a model on any device (3 points)
#
# Write `train_step(model, optimizer, loss_fn, inputs, targets)`: one step of training on a batch.
#
# - The model may be on the CPU or on the GPU; the batch may be anywhere too (a data loader gives CPU
#   tensors). Move `inputs` and `targets` to **the model's device** (`next(model.parameters()).device`).
#   Never move the model: its parameters are the optimizer's, and its device is the caller's choice. Don't
#   pick `"cuda"` yourself either: a CPU model on a machine with a GPU stays on the CPU.
# - Clear the old gradients (`optimizer.zero_grad()`), compute `loss_fn(model(inputs), targets)`, backward,
#   `optimizer.step()`.
# - Return the loss as a Python `float` (`loss.item()`): a number on the host, no graph kept alive.

# %% nbgrader="solution" id="train_step"
def train_step(model, optimizer, loss_fn, inputs, targets):
    """One optimizer step on (inputs, targets), moved to the model's device; returns the loss (float)."""
    ### BEGIN SOLUTION
    device = next(model.parameters()).device
    inputs, targets = inputs.to(device), targets.to(device)
    optimizer.zero_grad()
    loss = loss_fn(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss.item()
    ### END SOLUTION

# %% nbgrader="tests" id="train_step-tests" points=3
# Exercise 09.train_step: the visible tests (no output: they pass; grading adds hidden tests)
torch.manual_seed(1)
inputs, targets = torch.randn(6, 3), torch.randn(6, 2)  # on the CPU, as a data loader gives them
for device in DEVICES:
    model = make_model(device)
    reference = make_model("cpu")
    optimizer, ref_optimizer = optim.SGD(model.parameters(), lr=0.1), optim.SGD(reference.parameters(), lr=0.1)
    weight = model[0].weight
    for step in range(2):
        loss = run(f"train_step with the model on {device}, the batch on cpu", train_step, model, optimizer,
                   F.mse_loss, inputs, targets)
        ref_optimizer.zero_grad()
        ref_loss = F.mse_loss(reference(inputs), targets)
        ref_loss.backward()
        ref_optimizer.step()
        assert isinstance(loss, float), f"return a Python float, got {type(loss).__name__}"
        assert close(loss, ref_loss.item()), f"model on {device}, step {step + 1}: loss {loss}, not {ref_loss.item()}"
    assert model[0].weight is weight and weight.device.type == device, f"the model stays on {device}, same parameters"
    for (name, p), r in zip(model.named_parameters(), reference.parameters()):
        assert close(p, r), f"model on {device}: {name} after two steps differs from the reference"
model = make_model("cuda")
loss = run("train_step with the model and the batch on cuda", train_step, model, optim.SGD(model.parameters(), lr=0.1),
           F.mse_loss, inputs.cuda(), targets.cuda())
assert isinstance(loss, float), "return a Python float"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a09_gpu.py, train_step
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="evaluate-text"
# ## Exercise 3: evaluation that brings its results home (3 points)
#
# Write `evaluate(model, batches, loss_fn)`. `batches` is a list of `(inputs, targets)` pairs on the CPU; the
# last batch may be smaller. Return a pair `(mean_loss, predictions)`:
#
# - `mean_loss`: the loss over **all** samples as a Python `float`. `loss_fn` gives a batch's *mean*, so weigh
#   each batch by its number of samples (`len(inputs)`) and divide by the total.
# - `predictions`: the model's outputs for all samples, concatenated along the first dimension in batch order,
#   as **one numpy array** on the host.
# - Run the model under `torch.no_grad()` (evaluation builds no graph), on the model's device: move each batch
#   there, never the model.
# - Take results off the device with `.item()` and `.detach().cpu().numpy()`. A running total that is a tensor
#   on the CPU (`torch.zeros(1)`) cannot be added to a loss on the GPU.

# %% nbgrader="solution" id="evaluate"
def evaluate(model, batches, loss_fn):
    """(mean loss over all samples as a float, all predictions as one numpy array), model on any device."""
    ### BEGIN SOLUTION
    device = next(model.parameters()).device
    total, count, outputs = 0.0, 0, []
    with torch.no_grad():
        for inputs, targets in batches:
            inputs, targets = inputs.to(device), targets.to(device)
            output = model(inputs)
            total += loss_fn(output, targets).item() * len(inputs)
            count += len(inputs)
            outputs.append(output.detach().cpu().numpy())
    return total / count, np.concatenate(outputs)
    ### END SOLUTION

# %% nbgrader="tests" id="evaluate-tests" points=3
# Exercise 09.evaluate: the visible tests (no output: they pass; grading adds hidden tests)
torch.manual_seed(2)
data = [(torch.randn(n, 3), torch.randn(n, 2)) for n in (4, 4, 1)]
for device in DEVICES:
    model = make_model(device)
    graphs = []

    def loss_fn(output, target):  # F.mse_loss, noting whether the model's output carries a graph
        graphs.append(output.requires_grad)
        return F.mse_loss(output, target)

    result = run(f"evaluate with the model on {device}", evaluate, model, data, loss_fn)
    assert graphs and not any(graphs), \
        f"model on {device}: the model's outputs require grad, so each batch builds a graph: use torch.no_grad()"
    assert isinstance(result, tuple) and len(result) == 2, f"return a pair (mean_loss, predictions), got {result!r}"
    mean_loss, predictions = result
    assert isinstance(mean_loss, float), f"mean_loss: a Python float, got {type(mean_loss).__name__}"
    assert isinstance(predictions, np.ndarray), f"predictions: one numpy array, got {type(predictions).__name__}"
    reference = make_model("cpu")
    all_inputs, all_targets = torch.cat([x for x, _ in data]), torch.cat([y for _, y in data])
    assert close(predictions, reference(all_inputs)), f"model on {device}: predictions differ from the model's outputs"
    expected = F.mse_loss(reference(all_inputs), all_targets).item()
    assert close(mean_loss, expected), f"model on {device}: mean loss {mean_loss}, not {expected} (batches of 4, 4, 1)"
    assert next(model.parameters()).device.type == device, "the model stays where it is"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a09_gpu.py, evaluate
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="time_per_call-text"
# ## Exercise 4 (GPU only): time a call correctly (2 points)
#
# Write `time_per_call(fn, device, warmup=2, repeats=5)`: how long one call `fn()` takes on `device` (a
# string or a `torch.device`), in seconds, as a Python `float`.
#
# - First call `fn()` `warmup` times without timing (the first calls pay for allocations, caches, kernel
#   loading), then time `repeats` calls **one by one** with `time.perf_counter()` and return the **median**
#   (`float(np.median(times))`): one slow call (another process, a page fault) does not move it. `fn` is called
#   exactly `warmup + repeats` times.
# - On a CUDA device, `fn()` returns as soon as its work is queued: call `torch.cuda.synchronize()` before
#   starting the clock (nothing earlier is still running) and again before stopping it (the work has finished).
#   On the CPU there is nothing to wait for: don't call `torch.cuda` at all (a machine without CUDA has none).
#   `torch.device(device).type` tells them apart.
#
# The visible tests run on any machine. The points need a real GPU: grading checks your times against the
# GPU's, with work that takes the GPU far longer than queueing it. On a machine without a GPU (or with the
# simulated device) grading leaves these points blank ("not graded"), neither 0 nor 2.

# %% nbgrader="solution" id="time_per_call"
def time_per_call(fn, device, warmup=2, repeats=5):
    """Median seconds of one call fn() on device, after warmup calls; synchronised on CUDA."""
    ### BEGIN SOLUTION
    cuda = torch.device(device).type == "cuda"
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        if cuda:
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if cuda:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return float(np.median(times))
    ### END SOLUTION

# %% nbgrader="tests" id="time_per_call-tests" points=2
# Exercise 09.time_per_call: the visible tests (no output: they pass; grading adds hidden tests)
calls, pauses = [], [0.2, 0.2, 0.005, 0.2, 0.005, 0.2, 0.005]  # 2 warm-up calls, then 5 timed ones


def sleeper():
    time.sleep(pauses[len(calls)])
    calls.append(1)


seconds = time_per_call(sleeper, "cpu")
assert len(calls) == 7, f"fn is called warmup + repeats = 7 times, not {len(calls)}"
assert isinstance(seconds, float), f"return a Python float, got {type(seconds).__name__}"
assert 0.005 <= seconds < 0.05, f"the median of the 5 timed calls is about 0.005 s, got {seconds} (warm-up? a mean?)"
x = torch.ones(64, 64, device="cuda")
seconds = run("time_per_call on cuda", time_per_call, lambda: x @ x, torch.device("cuda"), warmup=1, repeats=3)
assert isinstance(seconds, float) and seconds > 0, f"a time in seconds on cuda, got {seconds!r}"
busy_until = [0.0]  # a pretend GPU: queue() returns at once, the device stays busy 30 ms more


def queue():
    busy_until[0] = max(busy_until[0], time.perf_counter()) + 0.03


def pretend_synchronize(device=None):  # waits until the queued work is done, as on a GPU
    time.sleep(max(0.0, busy_until[0] - time.perf_counter()))


real_synchronize, torch.cuda.synchronize = torch.cuda.synchronize, pretend_synchronize
try:
    seconds = run("time_per_call on a pretend GPU", time_per_call, queue, "cuda", warmup=1, repeats=3)
finally:
    torch.cuda.synchronize = real_synchronize
assert 0.025 <= seconds < 0.1, \
    (f"each call keeps the (pretend) GPU busy for 0.03 s but returns at once: expected about 0.03 s, got {seconds}; "
     "call torch.cuda.synchronize() before starting the clock and again before stopping it")
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a09_gpu.py, time_per_call
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="outro"
# ## Before you submit
#
# *Kernel > Restart Kernel and Run All Cells*, then **Validate**. "Success" means your notebook passes the
# visible tests, which catch the mistakes students make most often. Grading runs the same cells with **hidden
# tests** added to each tests cell: other models, nested batches, momentum, uneven batches and, on a GPU
# machine, timings against the GPU's own. Code that is right, not just right on the visible examples, passes
# them.
#
# Without a GPU, Validate runs the visible tests on the simulated device: Exercise 4's points are given
# when the assignment is graded on a GPU machine.
