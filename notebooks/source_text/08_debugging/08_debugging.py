# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader="readonly" id="intro"
# # Assignment 08: debugging autograd
#
# Chapter 8 in five lines:
#
# - `.grad` **accumulates**: clear it (`optimizer.zero_grad()`) before each backward, or every step is
#   fed the sum of all past gradients.
# - Keeping a loss *tensor* (for logging) keeps its whole graph alive; `retain_graph=True` then keeps
#   every saved tensor too. Log `loss.item()`.
# - An in-place change to a tensor that backward needs is an error (version counters); `.data` and
#   `torch.no_grad()` hide the change from the check and give **silently wrong** gradients instead.
# - `detach()` is a deliberate stop-gradient: in the wrong place it silently sends gradients where
#   they do not belong (or nowhere).
# - Hooks see gradients as they are computed: `tensor.register_hook(fn)` (it may replace the gradient
#   by returning a tensor) and `param.register_post_accumulate_grad_hook(fn)` (after `.grad` is updated);
#   both return a handle whose `remove()` takes the hook out.
#
# Exercises 1-4 each show a function with a bug, in the text (copy it into a scratch cell to see the
# symptom). Write the fixed function in the solution cell: same name, same arguments, same result when
# nothing goes wrong. Exercise 5 is a hook that runs inside the engine. Grading adds hidden tests
# (other models, seeds and sizes, memory measurements, accumulation, removed hooks). The exercises are
# graded separately.

# %% nbgrader="readonly" id="setup"
import linecache
import sys
import traceback

import numpy as np

import chibigrad as torch
from chibigrad import memory, nn, optim

import chibigrad.tracebacks
from IPython import get_ipython

chibigrad.tracebacks.install()  # errors read as in PyTorch: your frames and the message, not chibigrad's


def close(a, b, tol=1e-6):
    """True when tensors (or arrays, numbers) a and b have the same shape and values."""
    a, b = [np.asarray(v.detach() if isinstance(v, torch.Tensor) else v, dtype=np.float64) for v in (a, b)]
    return a.shape == b.shape and np.allclose(a, b, rtol=tol, atol=tol)


def make_model(seed=0, width=16):
    """A small regression network in float64 (4 inputs, 1 output)."""
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, width), nn.Tanh(), nn.Linear(width, 1)).double()


def make_data(n=32, seed=0):
    """Inputs (n, 4) and targets (n, 1), float64."""
    rng = np.random.default_rng(seed)
    inputs = rng.standard_normal((n, 4))
    return torch.tensor(inputs), torch.tensor(np.sin(inputs.sum(1, keepdims=True)))


def attempt(what, fn, *args):
    """fn(*args); an error becomes one sentence: the case (`what`), what came back, and the line that raised it."""
    try:
        return fn(*args)
    except Exception as err:
        message = f"{what}: expected a result, got {type(err).__name__}: {err}{your_line(err)}"
    raise AssertionError(message) from None  # one message, not a chain of two tracebacks


def your_line(err):
    """Where the error came from: the last line of a notebook cell (not this one) that it went through."""
    cells = [(frame, line) for frame, line in traceback.walk_tb(err.__traceback__)
             if frame.f_globals.get("__name__") == "__main__" and frame.f_code.co_filename != SETUP_CELL]
    if not cells:
        return ""
    frame, line = cells[-1]
    text = linecache.getline(frame.f_code.co_filename, line).strip()
    return f"\n    raised in {frame.f_code.co_qualname}" + (f": {text}" if text else "")


def without_helpers(shell, etype, value, tb, tb_offset=None):
    """Show an error without the frames of this cell's helpers: a failed test reads as its line and its message."""
    last = tb
    while last.tb_next is not None and last.tb_frame.f_globals.get("__name__") != "__main__":  # to the cell's frame
        last = last.tb_next
    while last.tb_next is not None and last.tb_next.tb_frame.f_code.co_filename != SETUP_CELL:
        last = last.tb_next
    last.tb_next = None
    show_as_pytorch(etype, value, tb, tb_offset)


SETUP_CELL = sys._getframe().f_code.co_filename  # this cell: the helpers that tracebacks leave out
shell = get_ipython()
if shell is not None:  # in Jupyter (not when the cells run as plain Python)
    show_as_pytorch = shell.CustomTB  # chibigrad.tracebacks.install()'s handler, after the cut
    shell.set_custom_exc((Exception,), without_helpers)
    shell.InteractiveTB.set_mode("Plain")  # each frame's line, not the lines around it: the message comes first


# %% [markdown] nbgrader="readonly" id="train-text"
# ## Exercise 1: a training loop that diverges and leaks memory (3 points)
#
# A colleague's loop. The loss falls for a few steps, then goes up and down; and `memory.saved()` grows
# by the same amount at every step. (`retain_graph=True` was added "to be safe".)
#
# ```python
# def train(model, inputs, targets, steps, lr=0.1):
#     optimizer = optim.SGD(model.parameters(), lr=lr)
#     history = []
#     for step in range(steps):
#         loss = (model(inputs) - targets).pow(2).mean()
#         loss.backward(retain_graph=True)
#         optimizer.step()
#         history.append(loss)
#     return history
# ```
#
# Fix it: each step uses that step's gradient only, `history` is a list of Python floats (the loss of
# each step, before its update), and after training no saved tensor is left behind.

# %% nbgrader="solution" id="train"
def train(model, inputs, targets, steps, lr=0.1):
    ### BEGIN SOLUTION
    optimizer = optim.SGD(model.parameters(), lr=lr)
    history = []
    for step in range(steps):
        optimizer.zero_grad()
        loss = (model(inputs) - targets).pow(2).mean()
        loss.backward()
        optimizer.step()
        history.append(loss.item())
    return history
    ### END SOLUTION

# %% nbgrader="tests" id="train-tests" points=3
# Exercise 08.train: the visible tests (no output: they pass; grading adds hidden tests)
import gc

inputs, targets = make_data()
net, twin = make_model(), make_model()
gc.collect()  # garbage from earlier cells is not this loop's doing
saved_before = memory.saved()
history = attempt("train(net, inputs, targets, steps=30)", train, net, inputs, targets, 30)
assert len(history) == 30 and all(type(v) is float for v in history), \
    f"history should hold 30 Python floats, got {[type(v).__name__ for v in history[:3]]}..."
assert memory.saved() == saved_before, \
    f"after training {memory.saved() - saved_before} bytes of saved tensors are still alive: a leak"
for _ in range(30):  # the same steps, by hand
    error = (twin(inputs) - targets).pow(2).mean()
    step_grads = torch.autograd.grad(error, list(twin.parameters()))
    with torch.no_grad():
        for p, g in zip(twin.parameters(), step_grads):
            p -= 0.1 * g
assert all(close(p, q) for p, q in zip(net.parameters(), twin.parameters())), \
    "after 30 steps the parameters differ from 30 plain SGD steps: is each step's gradient its own?"
assert history[-1] < history[0], f"the loss should fall: {history[0]:.4f} -> {history[-1]:.4f}"
probe = make_model()
memory.reset_peak()
start = memory.saved()
(probe(inputs) - targets).pow(2).mean()  # one step's graph, never used
one_step = memory.max_saved() - start
memory.reset_peak()
start = memory.saved()
train(make_model(), inputs, targets, steps=3)
peak = memory.max_saved() - start
assert peak <= one_step, (f"at its peak training held {peak} bytes of saved tensors, one step's graph needs "
                          f"{one_step}: free each step's graph before the next forward (no retain_graph=True)")
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a08_debugging.py, train
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="attention-text"
# ## Exercise 2: an in-place normalisation (2 points)
#
# Attention weights: scaled dot products between queries `q` (n, d) and keys `k` (m, d), exponentiated
# and normalised so that each row sums to 1. Backward fails with "one of the variables needed for
# gradient computation has been modified by an inplace operation".
#
# ```python
# def attention_weights(q, k):
#     scores = q @ k.T / np.sqrt(q.shape[1])
#     weights = (scores - scores.amax(1, keepdim=True)).exp()
#     weights /= weights.sum(1, keepdim=True)
#     return weights
# ```
#
# Fix it so that the gradients are right. (Careful: some ways to make the error go away only hide it.)

# %% nbgrader="solution" id="attention"
def attention_weights(q, k):
    ### BEGIN SOLUTION
    scores = q @ k.T / np.sqrt(q.shape[1])
    weights = (scores - scores.amax(1, keepdim=True)).exp()
    return weights / weights.sum(1, keepdim=True)
    ### END SOLUTION

# %% nbgrader="tests" id="attention-tests" points=2
# Exercise 08.attention: the visible tests (no output: they pass; grading adds hidden tests)
rng = np.random.default_rng(1)
q = torch.tensor(rng.standard_normal((3, 4)), requires_grad=True)
k = torch.tensor(rng.standard_normal((5, 4)), requires_grad=True)
w = attention_weights(q, k)
s = q.detach().numpy() @ k.detach().numpy().T / 2
expected = np.exp(s) / np.exp(s).sum(1, keepdims=True)
assert close(w, expected), "forward: each row is a softmax of the scaled scores"
upstream = torch.tensor(rng.standard_normal((3, 5)))
attempt("backward through attention_weights(q, k)", (w * upstream).sum().backward)
g = upstream.numpy()
dscores = expected * (g - (g * expected).sum(1, keepdims=True))
assert q.grad is not None and k.grad is not None, "q and k should get gradients"
assert close(q.grad, dscores @ k.detach().numpy() / 2), f"q.grad is wrong: {q.grad}"
assert close(k.grad, dscores.T @ q.detach().numpy() / 2), f"k.grad is wrong: {k.grad}"
big = attention_weights(torch.tensor([[2000.0, 0.0]]), torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
assert close(big, [[1.0, 0.0]]), \
    f"scores of 1414 and 0: expected weights [[1, 0]], got {big} (exp overflows: subtract the row's max first)"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a08_debugging.py, attention
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="td_loss-text"
# ## Exercise 3: a stop-gradient in the wrong place (2 points)
#
# Temporal-difference learning fits a value network `q_net` to a target built from the network's own
# prediction for the next state: `target = rewards + gamma * q_net(next_states)`. The target must be
# treated as a **fixed number**: the update moves `q_net(states)` towards it, not the target towards
# the prediction. This loss runs without any error, yet training does not fit the targets:
#
# ```python
# def td_loss(q_net, states, rewards, next_states, gamma=0.9):
#     predicted = q_net(states)
#     target = rewards + gamma * q_net(next_states)
#     return (predicted.detach() - target).pow(2).mean()
# ```
#
# Fix it: the gradient flows through `q_net(states)` only.

# %% nbgrader="solution" id="td_loss"
def td_loss(q_net, states, rewards, next_states, gamma=0.9):
    ### BEGIN SOLUTION
    predicted = q_net(states)
    with torch.no_grad():
        target = rewards + gamma * q_net(next_states)
    return (predicted - target).pow(2).mean()
    ### END SOLUTION

# %% nbgrader="tests" id="td_loss-tests" points=2
# Exercise 08.td_loss: the visible tests (no output: they pass; grading adds hidden tests)
q_net = make_model(seed=3)
states, _ = make_data(8, seed=3)
next_states, rewards = make_data(8, seed=4)
loss = td_loss(q_net, states, rewards, next_states)
with torch.no_grad():
    fixed = rewards + 0.9 * q_net(next_states)
assert close(loss, (q_net(states) - fixed).pow(2).mean()), f"the loss value changed: {loss}"
got = attempt("torch.autograd.grad(td_loss(...), q_net's parameters)", torch.autograd.grad, loss,
              list(q_net.parameters()))
plain = torch.autograd.grad((q_net(states) - fixed).pow(2).mean(), list(q_net.parameters()))
assert all(close(a, b) for a, b in zip(got, plain)), "the gradient should come from q_net(states) only"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a08_debugging.py, td_loss
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="relu_layer-text"
# ## Exercise 4: a ReLU through `.data` (2 points)
#
# A two-layer network written by hand, with the ReLU done "in place, without recording it". The
# forward values are right, no error is raised, and the network learns badly:
#
# ```python
# def two_layer(x, w1, b1, w2):
#     h = x @ w1 + b1
#     h.data.clamp_(min=0)
#     return h @ w2
# ```
#
# Fix it so that every gradient is right.

# %% nbgrader="solution" id="relu_layer"
def two_layer(x, w1, b1, w2):
    ### BEGIN SOLUTION
    h = (x @ w1 + b1).relu()
    return h @ w2
    ### END SOLUTION

# %% nbgrader="tests" id="relu_layer-tests" points=2
# Exercise 08.relu_layer: the visible tests (no output: they pass; grading adds hidden tests)
rng = np.random.default_rng(5)
x = torch.tensor(rng.standard_normal((6, 3)))
w1, b1, w2 = [torch.tensor(rng.standard_normal(s), requires_grad=True) for s in [(3, 4), (4,), (4, 2)]]
out = two_layer(x, w1, b1, w2)
pre = x.numpy() @ w1.detach().numpy() + b1.detach().numpy()
assert close(out, np.maximum(pre, 0) @ w2.detach().numpy()), "forward: relu(x @ w1 + b1) @ w2"
attempt("backward through two_layer(x, w1, b1, w2)", out.sum().backward)
through = (pre > 0) * (np.ones((6, 2)) @ w2.detach().numpy().T)  # the gradient reaching x @ w1 + b1
assert close(b1.grad, through.sum(0)), f"b1.grad: got {b1.grad}, expected {through.sum(0)}"
assert close(w1.grad, x.numpy().T @ through), "w1.grad is wrong: the ReLU's mask must reach backward"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a08_debugging.py, relu_layer
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="grad_norm_logger-text"
# ## Exercise 5: a gradient-norm logger (3 points)
#
# When training goes wrong you want to see each parameter's gradient norm at every step, without
# touching the training code. Write `GradNormLogger(model)`:
#
# - `self.norms`: a dict `{name: []}` with one list per parameter that requires grad (names from
#   `model.named_parameters()`);
# - after every backward that updates a parameter's `.grad`, append the norm of that `.grad` (the
#   **accumulated** gradient, what the optimizer will use), as a Python float, to its list: use
#   `param.register_post_accumulate_grad_hook(hook)`, where `hook(param)` is called with the parameter
#   right after its `.grad` was updated;
# - the logger only looks: gradients must be exactly what they are without it;
# - `remove()` takes every hook out (keep the handles): later backward passes log nothing.

# %% nbgrader="solution" id="grad_norm_logger"
class GradNormLogger:
    def __init__(self, model):
        ### BEGIN SOLUTION
        self.norms, names, self.handles = {}, {}, []

        def log(param):
            self.norms[names[id(param)]].append(float(param.grad.norm()))

        for name, param in model.named_parameters():
            if param.requires_grad:
                self.norms[name], names[id(param)] = [], name
                self.handles.append(param.register_post_accumulate_grad_hook(log))
        ### END SOLUTION

    def remove(self):
        ### BEGIN SOLUTION
        for handle in self.handles:
            handle.remove()
        self.handles = []
        ### END SOLUTION

# %% nbgrader="tests" id="grad_norm_logger-tests" points=3
# Exercise 08.grad_norm_logger: the visible tests (no output: they pass; grading adds hidden tests)
inputs, targets = make_data()
net = make_model()
logger = GradNormLogger(net)
assert list(logger.norms) == ["0.weight", "0.bias", "2.weight", "2.bias"], f"names: {list(logger.norms)}"
optimizer = optim.SGD(net.parameters(), lr=0.1)
expected = {name: [] for name in logger.norms}
for step in range(3):
    optimizer.zero_grad()
    attempt("backward with the logger's hooks on", (net(inputs) - targets).pow(2).mean().backward)
    for name, p in net.named_parameters():
        expected[name].append(float(np.linalg.norm(p.grad.numpy())))
    optimizer.step()
assert all(close(logger.norms[n], expected[n]) for n in expected), f"norms: {logger.norms}, expected {expected}"
assert all(type(v) is float for values in logger.norms.values() for v in values), "norms should be Python floats"
(net(inputs) - targets).pow(2).mean().backward()  # no zero_grad: .grad accumulates, the norm is of the sum
assert close(logger.norms["2.bias"][-1], float(np.linalg.norm(net[2].bias.grad.numpy()))), \
    "log the norm of the accumulated .grad"
logger.remove()
net(inputs).sum().backward()
assert all(len(values) == 4 for values in logger.norms.values()), "after remove(), nothing more is logged"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a08_debugging.py, grad_norm_logger
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="outro"
# ## Before you submit
#
# *Kernel > Restart Kernel and Run All Cells*, then **Validate**. "Success" means your notebook passes the
# visible tests, which catch the mistakes students make most often. Grading runs the same cells with **hidden
# tests** added to each tests cell: other models, seeds and sizes, memory measurements, accumulation, removed
# hooks. Code that is right, not just right on the visible examples, passes them.
