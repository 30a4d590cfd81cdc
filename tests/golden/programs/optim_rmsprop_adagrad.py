# requires: optim.RMSprop, optim.Adagrad
# RMSprop and Adagrad: defaults, print(opt), state_dict before and after steps, the numbers step by
# step on a fixed quadratic, per-group options, saving/restoring optimizer state, and their checks.
import torch
from golden_helpers import attempt


def quadratic(w):
    return (w ** 2 * torch.tensor([1.0, 2.0, 3.0, 0.5, 0.1])).sum()


def run(make_optimizer, steps=4):
    w = torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0, 0.7, 1.3]))
    opt = make_optimizer([w])
    for _ in range(steps):
        opt.zero_grad()
        quadratic(w).backward()
        opt.step()
        print(" ", w.data)  # (4 digits: PyTorch's float32 sqrt on MKL builds is not correctly rounded)
    return opt


w = torch.nn.Parameter(torch.ones(3))
for opt in (torch.optim.RMSprop([w]), torch.optim.Adagrad([w])):
    print(opt)
    print(opt.state_dict())
    print(opt.defaults)

for name, make in [("RMSprop", lambda p: torch.optim.RMSprop(p)),
                   ("RMSprop centered", lambda p: torch.optim.RMSprop(p, lr=0.05, centered=True)),
                   ("RMSprop momentum", lambda p: torch.optim.RMSprop(p, lr=0.01, momentum=0.9)),
                   ("RMSprop alpha", lambda p: torch.optim.RMSprop(p, alpha=0.5, eps=1e-6, maximize=True)),
                   ("Adagrad", lambda p: torch.optim.Adagrad(p)),
                   ("Adagrad lr_decay", lambda p: torch.optim.Adagrad(p, lr=0.5, lr_decay=0.1)),
                   ("Adagrad initial", lambda p: torch.optim.Adagrad(p, lr=0.1, initial_accumulator_value=1.0))]:
    print(name)
    opt = run(make)
    print(" ", opt.state_dict()["state"])

# per-group learning rates, and a group added later
a, b = torch.nn.Parameter(torch.tensor([1.0, 2.0])), torch.nn.Parameter(torch.tensor([-1.0]))
opt = torch.optim.Adagrad([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
c = torch.nn.Parameter(torch.tensor([3.0]))
opt.add_param_group({"params": [c], "lr_decay": 0.5})
for _ in range(2):
    opt.zero_grad()
    ((a ** 2).sum() + (b ** 2).sum() + (c ** 2).sum()).backward()
    opt.step()
print(a.data, b.data, c.data, [len(opt.state[p]) for p in (a, b, c)])
print(opt.state_dict()["param_groups"])

# an optimizer's state loaded into a fresh optimizer continues the same run (PyTorch's fresh optimizer
# then shares the state tensors with the old one; chibigrad's copies them, so only one of them steps)
w1 = torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0, 0.7, 1.3]))
opt1 = torch.optim.RMSprop([w1], lr=0.05, momentum=0.5)
for _ in range(2):
    opt1.zero_grad()
    quadratic(w1).backward()
    opt1.step()
w2 = torch.nn.Parameter(w1.detach().clone())
opt2 = torch.optim.RMSprop([w2], lr=0.05, momentum=0.5)
opt2.load_state_dict(opt1.state_dict())
opt2.zero_grad()
quadratic(w2).backward()
opt2.step()
print(w2.data, opt2.state[w2]["step"], sorted(opt2.state[w2]))

attempt("RMSprop lr", lambda: torch.optim.RMSprop([w], lr=-1))
attempt("RMSprop eps", lambda: torch.optim.RMSprop([w], eps=-1))
attempt("RMSprop momentum", lambda: torch.optim.RMSprop([w], momentum=-1))
attempt("RMSprop weight_decay", lambda: torch.optim.RMSprop([w], weight_decay=-1))
attempt("RMSprop alpha", lambda: torch.optim.RMSprop([w], alpha=-1))
attempt("Adagrad lr", lambda: torch.optim.Adagrad([w], lr=-1))
attempt("Adagrad lr_decay", lambda: torch.optim.Adagrad([w], lr_decay=-1))
attempt("Adagrad weight_decay", lambda: torch.optim.Adagrad([w], weight_decay=-1))
attempt("Adagrad initial", lambda: torch.optim.Adagrad([w], initial_accumulator_value=-1))
attempt("Adagrad eps", lambda: torch.optim.Adagrad([w], eps=-1))
attempt("empty", lambda: torch.optim.Adagrad([]))
