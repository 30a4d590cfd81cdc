# What optimizer.step() does, by hand (book chapter 4b): the in-place-on-a-leaf error, no_grad against .data,
# the tutorial's `w1 = w1 - learning_rate * w1.grad` failing at step 2, and SGD matching the hand-written step.
import warnings

import torch

w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
w.grad = torch.tensor([0.5, -1.0, 2.0])
for label, update in (("w -= 0.1 * w.grad", lambda: w.__isub__(0.1 * w.grad)), ("w.sub_(1)", lambda: w.sub_(1.0)),
                      ("w[0] = 5", lambda: w.__setitem__(0, 5.0))):
    try:
        update()
    except RuntimeError as err:
        print(label, "->", err)
with torch.no_grad():
    w -= 0.1 * w.grad
print("no_grad:", w, w._version, w.is_leaf, w.grad_fn, w.requires_grad)
w.data -= 0.1 * w.grad
print(".data:", w, w._version, w.is_leaf)

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x * x).sum()
x.data.mul_(10)
y.backward()
print("gradient after a .data change:", x.grad)
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x * x).sum()
with torch.no_grad():
    x.mul_(10)
try:
    y.backward()
except RuntimeError as err:
    print("after a no_grad change:", err)


def count_nodes(fn):
    seen, stack = {fn}, [fn]
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return len(seen)


a = torch.tensor([[1.0, -2.0], [0.5, 3.0]])
w1 = torch.tensor([[0.1, 0.2], [0.3, 0.4]], requires_grad=True)
learning_rate = 0.1
for step in range(2):
    L = (10 - w1 * a).sum()
    L.backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grad = w1.grad
    print(f"step {step}: is_leaf={w1.is_leaf} grad_fn={type(w1.grad_fn).__name__} grad is None: {grad is None}",
          [f"{type(c.message).__name__}: {str(c.message)[:76]}" for c in caught])
    try:
        w1 = w1 - learning_rate * grad
    except TypeError as err:
        print("TypeError:", err)

w1 = first = torch.tensor([[0.1, 0.2], [0.3, 0.4]], requires_grad=True)
for step in range(5):
    L = (10 - w1 * a).sum()
    L.backward()
    print("retain_grad loop, step", step, "nodes:", count_nodes(L.grad_fn), "first leaf's grad sum:",
          first.grad.sum().item())
    w1 = w1 - learning_rate * w1.grad
    w1.retain_grad()

p = torch.nn.Parameter(torch.ones(3))
opt = torch.optim.SGD([p], lr=0.1)
y = (p * p).sum()
y.backward(retain_graph=True)
opt.step()
print("after step:", p, p._version)
try:
    y.backward()
except RuntimeError as err:
    print("backward after step:", err)

q = torch.nn.Parameter(torch.ones(2))
torch.optim.SGD([q], lr=0.5).step()
print("no grad, no change:", q, q._version)

X = torch.tensor([[1.0, 2.0], [-1.0, 0.5], [0.0, 1.0], [2.0, -1.0]])
Y = torch.tensor([1.0, -2.0, 0.5, 3.0])


def train(use_optimizer, momentum):
    v = torch.zeros(2, requires_grad=True)
    opt, buf = torch.optim.SGD([v], lr=0.1, momentum=momentum), None
    for _ in range(10):
        ((X @ v - Y) ** 2).mean().backward()
        if use_optimizer:
            opt.step()
        else:
            with torch.no_grad():
                buf = v.grad.clone() if buf is None else momentum * buf + v.grad
                v -= 0.1 * (buf if momentum else v.grad)
        v.grad = None
    return v


for momentum in (0.0, 0.9):
    # plain SGD is bit for bit the hand-written step; PyTorch's momentum step is a fused multiply-add (the last bit)
    print(f"momentum {momentum}: by hand close to SGD:",
          torch.allclose(train(False, momentum), train(True, momentum), rtol=1e-6, atol=1e-7),
          [round(t, 4) for t in train(True, momentum).tolist()])
