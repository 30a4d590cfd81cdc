# Follows the optimizer exercises of deep-learning courses (and the torch.optim.Adam docs' pseudocode):
# write SGD with momentum and Adam by hand on plain tensors, then check them against torch.optim on the
# same problem; also the documented maximize= and the closure form of step() used by LBFGS-style code.
import math
import torch

target = torch.tensor([1.0, -2.0, 0.5])


def loss_fn(w):
    return ((w - target) ** 2 * torch.tensor([1.0, 4.0, 0.25])).sum()


def run_builtin(make_opt, steps=5):
    w = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
    opt = make_opt([w])
    for _ in range(steps):
        opt.zero_grad()
        loss_fn(w).backward()
        opt.step()
    return w.detach()


def adam_by_hand(lr=0.1, betas=(0.9, 0.999), eps=1e-8, steps=5):
    w = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
    m = torch.zeros_like(w)
    v = torch.zeros_like(w)
    for t in range(1, steps + 1):
        w.grad = None
        loss_fn(w).backward()
        g = w.grad
        with torch.no_grad():
            m = betas[0] * m + (1 - betas[0]) * g
            v = betas[1] * v + (1 - betas[1]) * g * g
            m_hat = m / (1 - betas[0] ** t)
            v_hat = v / (1 - betas[1] ** t)
            w -= lr * m_hat / (v_hat.sqrt() + eps)
    return w.detach()


def sgd_momentum_by_hand(lr=0.05, momentum=0.9, steps=5):
    w = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
    buf = None
    for _ in range(steps):
        w.grad = None
        loss_fn(w).backward()
        with torch.no_grad():
            buf = w.grad.clone() if buf is None else momentum * buf + w.grad
            w -= lr * buf
    return w.detach()


mine, theirs = adam_by_hand(), run_builtin(lambda p: torch.optim.Adam(p, lr=0.1))
print(mine, theirs, torch.allclose(mine, theirs, atol=1e-6))
mine, theirs = sgd_momentum_by_hand(), run_builtin(lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9))
print(mine, theirs, torch.allclose(mine, theirs, atol=1e-6))
print(run_builtin(lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True)))
print(run_builtin(lambda p: torch.optim.Adam(p, lr=0.1, amsgrad=True)))
print(run_builtin(lambda p: torch.optim.AdamW(p, lr=0.1, weight_decay=0.1)))

# maximize=True climbs: -loss goes down
w = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
opt = torch.optim.SGD([w], lr=0.05, maximize=True)
neg = -loss_fn(w)
neg.backward()
opt.step()
print(w)

# step(closure) re-evaluates the loss and returns it
w = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)
opt = torch.optim.Adam([w], lr=0.1)


def closure():
    opt.zero_grad()
    loss = loss_fn(w)
    loss.backward()
    return loss


for i in range(3):
    loss = opt.step(closure)
    print(i, round(loss.item(), 5))
print(opt.state[w]["step"], math.isclose(opt.param_groups[0]["lr"], 0.1))
