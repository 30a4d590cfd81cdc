# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader="readonly" id="intro"
# # Assignment 04: stopping gradients
#
# Chapter 4 in five lines:
#
# - `t.detach()` is the same data (and the same **version counter**) without history: backward stops there.
# - `with torch.no_grad():` records nothing and saves nothing: the tool for weight updates and targets. An
#   in-place change of a leaf that requires grad is only allowed there, and it bumps the tensor's version,
#   so a graph that saved the old values notices.
# - `module.requires_grad_(False)` freezes parameters: no `.grad`, and a frozen backbone is not recorded.
# - The straight-through estimator uses a quantiser forward and (almost) the identity backward.
# - A gradient penalty differentiates a gradient: `autograd.grad(..., create_graph=True)` on a fresh leaf.
#
# Write your code where a cell says `raise NotImplementedError("Exercise ...")` (delete that line). The
# cell after each solution runs visible tests: no output means they pass. Grading adds hidden tests (other
# shapes and dtypes, float64 finite-difference checks, larger models, version counters, memory). Each
# exercise is graded on its own: don't call one exercise's solution from another.

# %% nbgrader="readonly" id="setup"
import copy

import numpy as np

import chibigrad as torch
import chibigrad.memory
import chibigrad.nn.functional as F
from chibigrad import nn, optim
from chibigrad.autograd import Function

import chibigrad.tracebacks

chibigrad.tracebacks.install()  # errors read as in PyTorch: your frames and the message, not chibigrad's


def close(a, b, tol=1e-5):
    """True when tensors (or arrays, numbers) a and b have the same shape and values."""
    a, b = [np.asarray(v.detach() if isinstance(v, torch.Tensor) else v, dtype=np.float64) for v in (a, b)]
    return a.shape == b.shape and np.allclose(a, b, rtol=tol, atol=tol)

# %% [markdown] nbgrader="readonly" id="sign_ste-text"
# ## Exercise 1: a straight-through estimator for `sign` (3 points)
#
# Binarised networks (BinaryConnect, XNOR-Net) use `sign` in the forward pass, whose derivative is zero
# almost everywhere. The chapter's straight-through estimator passes the gradient through unchanged. The
# version binarised networks use also **cancels it where `|x| > 1`**, the derivative of a hard tanh, so that
# a weight that has drifted far from 0 stops being pushed further.
#
# Write `SignSTE`, an `autograd.Function`, as a reusable piece:
#
# - `forward(ctx, x)`: `+1` where `x >= 0` (0 included: a binary weight is never 0), `-1` elsewhere, with
#   `x`'s shape and dtype;
# - `backward(ctx, grad)`: `grad` where `|x| <= 1`, 0 elsewhere. Keep what backward needs with
#   `ctx.save_for_backward` (so backward frees it).

# %% nbgrader="solution" id="sign_ste"
class SignSTE(Function):
    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        inside = x.abs() <= 1
        ctx.save_for_backward(inside)
        return torch.where(x >= 0, torch.ones_like(x), -torch.ones_like(x))
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad):
        ### BEGIN SOLUTION
        (inside,) = ctx.saved_tensors
        return torch.where(inside, grad, torch.zeros_like(grad))
        ### END SOLUTION

# %% nbgrader="tests" id="sign_ste-tests" points=3
# Exercise 04.sign_ste: the visible tests (no output: they pass; grading adds hidden tests)
x = torch.tensor([-2.0, -0.5, 0.0, 0.3, 1.0, 1.5], requires_grad=True)
y = SignSTE.apply(x)
assert close(y, [-1.0, -1.0, 1.0, 1.0, 1.0, 1.0]), f"forward: +1 where x >= 0, -1 elsewhere; got {y}"
assert y.dtype == x.dtype, f"the result should have x's dtype {x.dtype}, got {y.dtype}"
assert y.grad_fn is not None and y.grad_fn.name() == "SignSTEBackward", f"grad_fn: got {y.grad_fn}"
(y * torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])).sum().backward()
assert close(x.grad, [0.0, 2.0, 3.0, 4.0, 5.0, 0.0]), f"x.grad: the gradient passes where |x| <= 1, got {x.grad}"
w = torch.tensor([[0.5, -3.0]], requires_grad=True)
F.linear(torch.tensor([[1.0, 1.0]]), SignSTE.apply(w)).sum().backward()
assert close(w.grad, [[1.0, 0.0]]), f"a binarised linear layer: w.grad should be [[1, 0]], got {w.grad}"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a04_stop_gradient.py, sign_ste
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="ema_update-text"
# ## Exercise 2: an EMA target network (3 points)
#
# BYOL, MoCo and DQN variants keep a *target* network that trails the online one: after every optimizer
# step, each target parameter becomes `decay * target + (1 - decay) * online`. Write
# `ema_update_(target, online, decay)` for two modules of the same architecture:
#
# - update every parameter of `target` **in place**, with tensor operations inside `torch.no_grad()`: the
#   target's parameters stay the same tensor objects (an optimizer or a hook may hold them), stay leaves,
#   keep their `requires_grad`, and no graph is recorded;
# - in-place operations on the parameters themselves bump their **version counter**, so a graph that saved
#   a target parameter and is still waiting for backward detects the change. (`p.data` is a different
#   tensor with its own counter: going through it would hide the change, so don't.)
# - **copy** the buffers (BatchNorm's running statistics, `module.buffers()`), don't average them;
# - leave `online` unchanged.

# %% nbgrader="solution" id="ema_update"
def ema_update_(target, online, decay):
    """target <- decay * target + (1 - decay) * online for every parameter, in place; buffers copied."""
    ### BEGIN SOLUTION
    with torch.no_grad():
        for t, o in zip(target.parameters(), online.parameters()):
            t.mul_(decay).add_(o, alpha=1 - decay)
        for t, o in zip(target.buffers(), online.buffers()):
            t.copy_(o)
    ### END SOLUTION

# %% nbgrader="tests" id="ema_update-tests" points=3
# Exercise 04.ema_update: the visible tests (no output: they pass; grading adds hidden tests)
torch.manual_seed(0)
online = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
target = copy.deepcopy(online).requires_grad_(False)
online(torch.randn(8, 3))  # updates online's running statistics
with torch.no_grad():
    for p in online.parameters():
        p.add_(1.0)
weight, old = target[0].weight, target[0].weight.detach().clone()
version = weight._version
ema_update_(target, online, 0.9)
assert target[0].weight is weight, "update the parameters in place: they must stay the same tensor objects"
assert close(weight, 0.9 * old + 0.1 * online[0].weight), "target = decay * target + (1 - decay) * online"
assert weight._version > version, "use in-place operations on the parameter itself (not .data): its version must grow"
assert all(p.grad_fn is None and not p.requires_grad for p in target.parameters()), \
    "no graph: the target's parameters must stay leaves that do not require grad (use torch.no_grad())"
assert close(target[1].running_mean, online[1].running_mean), "copy the buffers (running statistics)"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a04_stop_gradient.py, ema_update
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="fine_tune-text"
# ## Exercise 3: freeze all but a few layers (2 points)
#
# Write `fine_tune(model, trainable, lr)`. `trainable` is a list of sub-module names, as
# `model.named_modules()` names them (`"2"`, `"head"`, `"encoder.layers.3"`). Then:
#
# - a parameter stays trainable when it belongs to one of those sub-modules (its name, from
#   `model.named_parameters()`, is inside that module: `"2.weight"` is in `"2"`, but `"12.weight"` is not);
#   every other parameter is frozen with `requires_grad_(False)`;
# - every `nn.BatchNorm1d` outside the trainable sub-modules is put in eval mode, so that its running
#   statistics stay frozen too;
# - return `optim.SGD` with momentum 0.9 and learning rate `lr` over the trainable parameters **only**, in
#   the model's order.

# %% nbgrader="solution" id="fine_tune"
def fine_tune(model, trainable, lr):
    """Freeze everything outside the `trainable` sub-modules; an SGD optimizer over what stays trainable."""
    ### BEGIN SOLUTION
    def inside(name):
        return any(name == prefix or name.startswith(prefix + ".") for prefix in trainable)

    params = []
    for name, p in model.named_parameters():
        p.requires_grad_(inside(name))
        if inside(name):
            params.append(p)
    for name, module in model.named_modules():
        if isinstance(module, nn.BatchNorm1d) and not inside(name):
            module.eval()
    return optim.SGD(params, lr=lr, momentum=0.9)
    ### END SOLUTION

# %% nbgrader="tests" id="fine_tune-tests" points=2
# Exercise 04.fine_tune: the visible tests (no output: they pass; grading adds hidden tests)
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))
opt = fine_tune(model, ["3"], lr=0.1)
assert [n for n, p in model.named_parameters() if p.requires_grad] == ["3.weight", "3.bias"], \
    f"only the last layer is trainable, got {[n for n, p in model.named_parameters() if p.requires_grad]}"
assert [id(p) for p in opt.param_groups[0]["params"]] == [id(model[3].weight), id(model[3].bias)], \
    "the optimizer must hold the trainable parameters only"
assert opt.param_groups[0]["momentum"] == 0.9 and opt.param_groups[0]["lr"] == 0.1, "SGD, momentum 0.9, lr"
running, first = model[1].running_mean.clone(), model[0].weight.detach().clone()
model(torch.randn(16, 3)).pow(2).mean().backward()
opt.step()
assert model[0].weight.grad is None and close(model[0].weight, first), "frozen layers get no gradient, don't move"
assert close(model[1].running_mean, running), "a frozen BatchNorm must not update its running statistics (eval mode)"
deep = nn.Sequential(*[nn.Linear(2, 2) for _ in range(12)])  # modules "0" to "11"
fine_tune(deep, ["1"], lr=0.1)
got = [n for n, p in deep.named_parameters() if p.requires_grad]
assert got == ["1.weight", "1.bias"], \
    f"12 layers, trainable ['1']: expected ['1.weight', '1.bias'] (not '10.weight', '11.bias'), got {got}"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a04_stop_gradient.py, fine_tune
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="gradient_penalty-text"
# ## Exercise 4: a one-sided gradient penalty (3 points)
#
# The chapter's WGAN-GP penalty pulls the norm of the critic's input gradient towards 1 from both sides. Its
# one-sided variant (WGAN-LP, Petzka et al., 2018) only penalises norms **above** 1, which is all a
# 1-Lipschitz critic needs. Write `gradient_penalty(D, real, fake, alpha)`:
#
# - `real` and `fake` have shape `(N, ...)` (`fake` comes from a generator: it has a graph), `alpha` has
#   shape `(N, 1, ..., 1)`; the points are `alpha * real + (1 - alpha) * fake`, made a **fresh leaf** that
#   requires grad (so the penalty never reaches the generator);
# - the gradient of `D(points).sum()` with respect to the points, with `create_graph=True` so the penalty
#   can be differentiated with respect to `D`'s weights (use `torch.autograd.grad`: `.grad` stays untouched);
# - `norm` is the 2-norm of one sample's gradient over **all** its elements (a sample may be a matrix or an
#   image: reshape to `(N, -1)`); the penalty is the mean over the `N` samples of `max(0, norm - 1) ** 2`
#   (`Tensor.clamp(min=0)` is the max);
# - don't modify `real` or `fake` (no `requires_grad_` on the caller's tensors).

# %% nbgrader="solution" id="gradient_penalty"
def gradient_penalty(D, real, fake, alpha):
    """mean(max(0, ||d D(x) / dx|| - 1) ** 2) at x = alpha * real + (1 - alpha) * fake, differentiable in D."""
    ### BEGIN SOLUTION
    points = (alpha * real + (1 - alpha) * fake).detach().requires_grad_(True)
    (grads,) = torch.autograd.grad(D(points).sum(), points, create_graph=True)
    norms = grads.reshape(grads.shape[0], -1).norm(2, dim=1)
    return ((norms - 1).clamp(min=0) ** 2).mean()
    ### END SOLUTION

# %% nbgrader="tests" id="gradient_penalty-tests" points=3
# Exercise 04.gradient_penalty: the visible tests (no output: they pass; grading adds hidden tests)
torch.manual_seed(0)
G, D = nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))
with torch.no_grad():
    D[2].weight.mul_(20.0)  # a steep critic: its gradient norms are above 1
real, fake = torch.randn(6, 2) + 2, G(torch.randn(6, 2))
alpha = torch.rand(6, 1)
penalty = gradient_penalty(D, real, fake, alpha)
assert penalty.shape == (), f"the penalty is a scalar, got shape {tuple(penalty.shape)}"
assert penalty.grad_fn is not None, "the penalty must be differentiable with respect to D's weights (create_graph)"
assert all(p.grad is None for p in D.parameters()), "use torch.autograd.grad: D's .grad must stay untouched"
assert not real.requires_grad and fake.grad_fn is not None, "don't modify real or fake"
penalty.backward()
assert D[0].weight.grad is not None, "the penalty's backward should reach D's first layer"
assert G.weight.grad is None, "the penalty must not reach the generator: make the points a fresh leaf"
steep, flat = nn.Linear(2, 1), nn.Linear(2, 1)  # linear critics: the input gradient is the weight
with torch.no_grad():
    steep.weight.copy_(torch.tensor([[3.0, 4.0]]))
    flat.weight.copy_(torch.tensor([[0.3, 0.4]]))
assert close(gradient_penalty(steep, real, fake, alpha), 16.0), "a linear critic with weight [3, 4]: (5 - 1) ** 2"
assert close(gradient_penalty(flat, real, fake, alpha), 0.0), "weight [0.3, 0.4]: norm 0.5 is below 1, no penalty"
W = torch.tensor([[3.0, 0.0, 0.0], [0.0, 4.0, 0.0]])  # samples are 2x3 matrices; the input gradient is W
critic = lambda x: (x * W).sum((1, 2))  # noqa: E731
got = gradient_penalty(critic, torch.randn(5, 2, 3), torch.randn(5, 2, 3), torch.rand(5, 1, 1))
assert close(got, 16.0), \
    f"samples of shape (2, 3), input gradient W, norm 5 over all elements: expected (5 - 1) ** 2 = 16, got {got}"
### BEGIN HIDDEN TESTS
# judged in the grader's own process: autograder/grading/exercises/a04_stop_gradient.py, gradient_penalty
### END HIDDEN TESTS

# %% [markdown] nbgrader="readonly" id="outro"
# ## Before you submit
#
# *Kernel > Restart Kernel and Run All Cells*, then **Validate**. "Success" means your notebook passes the
# visible tests, which catch the mistakes students make most often. Grading runs the same cells with **hidden
# tests** added to each tests cell: other shapes and dtypes, float64 finite-difference checks, larger models,
# version counters and memory. Code that is right, not just right on the visible examples, passes them.
