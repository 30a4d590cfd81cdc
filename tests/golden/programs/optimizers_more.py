# The optimizers of torch.optim beyond the common five (Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD) with
# their options, state and argument errors, on a loss whose gradients need no reduction (bitwise comparable).
# numpy's AVX-512 float32 power (w ** 4) rounds 11% of results otherwise than correctly (0.07% on its AVX2
# path): after 60 steps Rprop's state differs in the fifth digit (measured: 3.1e-5 relative; exact on AVX2).
# tolerance: 1e-4
import torch
def run(make, steps=60, digits=None, **kw):
    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.tensor([[0.5, -1.5, 2.0], [1.0, 0.25, -0.75]]))
    b = torch.nn.Parameter(torch.tensor([0.1, -0.2]))
    tw = torch.tensor([[1.0, 0.0, -1.0], [0.5, -0.5, 3.0]])
    sw = torch.tensor([[1.0, 3.0, 0.5], [2.0, 0.1, 1.5]])
    tb = torch.tensor([1.0, -1.0])
    opt = make([w, b], **kw)
    for step in range(steps):
        opt.zero_grad()
        loss = (((w - tw) ** 2) * sw + 0.01 * w ** 4).sum() + ((b - tb) ** 2).sum()  # gradients without reductions
        loss.backward()
        opt.step()
    print(type(opt).__name__, kw, f"{loss.item():.4f}")
    show = (lambda v: v) if digits is None else (lambda v: [[float(f'{x:.{digits}g}') for x in r] for r in v] if isinstance(v[0], list) else [float(f'{x:.{digits}g}') for x in v])
    print(show(w.tolist()), show(b.tolist()))
    print({k: (show(v.tolist()) if isinstance(v, torch.Tensor) and v.ndim else v.tolist() if isinstance(v, torch.Tensor) else v) for k, v in opt.state[w].items()})
run(torch.optim.Adamax); run(torch.optim.Adamax, weight_decay=0.1, maximize=False, lr=0.01)
# NAdam and Adadelta: 5 significant digits, as PyTorch's CPU sqrt is not correctly rounded (numpy's is)
run(torch.optim.NAdam, digits=5); run(torch.optim.NAdam, digits=5, weight_decay=0.01, decoupled_weight_decay=True, lr=0.01)
run(torch.optim.NAdam, digits=5, weight_decay=0.01)
run(torch.optim.RAdam); run(torch.optim.RAdam, lr=0.01, weight_decay=0.01); run(torch.optim.RAdam, decoupled_weight_decay=True, weight_decay=0.1)
run(torch.optim.Adadelta, digits=5); run(torch.optim.Adadelta, digits=5, lr=0.5, rho=0.8, weight_decay=0.01)
run(torch.optim.Rprop); run(torch.optim.Rprop, lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2))
run(torch.optim.ASGD); run(torch.optim.ASGD, lr=0.05, t0=10, lambd=1e-3, weight_decay=0.01)
print(torch.optim.NAdam([torch.nn.Parameter(torch.ones(1))]))
for bad in [dict(lr=-1.0), dict(eps=-1.0), dict(betas=(1.0, 0.9)), dict(weight_decay=-0.1)]:
    try:
        torch.optim.Adamax([torch.nn.Parameter(torch.ones(1))], **bad)
    except ValueError as e:
        print("ValueError:", e)
for make, bad in [(torch.optim.Adadelta, dict(rho=1.5)), (torch.optim.Rprop, dict(etas=(1.2, 0.5))), (torch.optim.NAdam, dict(momentum_decay=-1.0))]:
    try:
        make([torch.nn.Parameter(torch.ones(1))], **bad)
    except ValueError as e:
        print("ValueError:", e)
