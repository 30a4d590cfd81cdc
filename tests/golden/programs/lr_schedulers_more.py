# torch.optim's schedulers beyond the common ones, and dir(torch.optim).
import torch
from torch.optim import lr_scheduler as L
def opt(kind=torch.optim.SGD, **kw):
    return kind([torch.nn.Parameter(torch.ones(2))], lr=0.1, **kw)
def trace(o, s, n, name, **step_kw):
    out = []
    for i in range(n):
        o.step(); s.step(**step_kw)
        out.append(round(s.get_last_lr()[0], 12))
    print(name, out)
o = opt(); trace(o, L.MultiplicativeLR(o, lambda e: 0.95), 6, "mult")
o = opt(); trace(o, L.PolynomialLR(o, total_iters=4, power=2.0), 7, "poly")
o = opt(); trace(o, L.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001), 12, "sgdr")
o = opt(); s = L.CosineAnnealingWarmRestarts(o, T_0=4)
for e in [0.5, 1.25, 5.0, 9.5]:
    s.step(e); print("sgdr epoch", e, round(s.get_last_lr()[0], 12), s.T_cur, s.T_i, s.last_epoch)
o = opt(); trace(o, L.ChainedScheduler([L.ConstantLR(o, factor=0.5, total_iters=2), L.ExponentialLR(o, gamma=0.9)]), 5, "chain")
o = opt(momentum=0.9); s = L.OneCycleLR(o, max_lr=1.0, total_steps=10)
print("onecycle start", o.param_groups[0]["lr"], o.param_groups[0]["momentum"])
for i in range(9):
    o.step(); s.step(); print(round(o.param_groups[0]["lr"], 12), round(o.param_groups[0]["momentum"], 12))
o = opt(torch.optim.Adam); s = L.OneCycleLR(o, max_lr=0.5, epochs=2, steps_per_epoch=3, anneal_strategy="linear", three_phase=True)
trace(o, s, 5, "onecycle adam"); print(o.param_groups[0]["betas"])
for bad in [dict(), dict(total_steps=5, pct_start=1), dict(total_steps=5, anneal_strategy="tri"), dict(total_steps=5, max_lr=[1.0, 2.0])]:
    try:
        L.OneCycleLR(opt(momentum=0.9), **{"max_lr": 1.0, **bad})
    except ValueError as e:
        print("ValueError:", e)
try:
    L.OneCycleLR(opt(torch.optim.Adagrad), max_lr=1.0, total_steps=5)
except ValueError as e:
    print("ValueError:", e)
o = opt(momentum=0.9); s = L.OneCycleLR(o, max_lr=1.0, total_steps=2)
try:
    for i in range(3):
        o.step(); s.step()
except ValueError as e:
    print("ValueError:", e)
try:
    L.MultiplicativeLR(opt(), 0.5)
except TypeError as e:
    print("TypeError:", e)

