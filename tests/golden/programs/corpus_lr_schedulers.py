# Follows the torch.optim documentation ("How to adjust learning rate") and tutorials that print
# scheduler.get_last_lr() each epoch: StepLR, MultiStepLR, ExponentialLR, LambdaLR, CosineAnnealingLR,
# ReduceLROnPlateau, with optimizer.step() before scheduler.step().
import torch
from torch.optim import lr_scheduler

w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))


def run(make_scheduler, epochs=6, base_lr=0.1, **optim_kwargs):
    optimizer = torch.optim.SGD([w], lr=base_lr, **optim_kwargs)
    scheduler = make_scheduler(optimizer)
    lrs = []
    for epoch in range(epochs):
        optimizer.zero_grad()
        loss = (w ** 2).sum()
        loss.backward()
        optimizer.step()
        lrs.append(round(scheduler.get_last_lr()[0], 6))
        scheduler.step()
    print(type(scheduler).__name__, lrs, round(optimizer.param_groups[0]["lr"], 6))
    return optimizer, scheduler


run(lambda opt: lr_scheduler.StepLR(opt, step_size=2, gamma=0.5))
run(lambda opt: lr_scheduler.MultiStepLR(opt, milestones=[2, 4], gamma=0.1))
run(lambda opt: lr_scheduler.ExponentialLR(opt, gamma=0.9))
run(lambda opt: lr_scheduler.LambdaLR(opt, lr_lambda=lambda epoch: 0.95 ** epoch))
opt, sched = run(lambda opt: lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=0.01), epochs=9)
print(sched.base_lrs, sched.last_epoch, opt.param_groups[0]["initial_lr"])
print(sorted(k for k in sched.state_dict() if not k.startswith("_")))

# warm-up schedules: LinearLR and ConstantLR
run(lambda opt: lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=4), epochs=7)
run(lambda opt: lr_scheduler.LinearLR(opt, start_factor=1.0, end_factor=0.5, total_iters=3), epochs=5)
run(lambda opt: lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2), epochs=4)
try:
    lr_scheduler.LinearLR(torch.optim.SGD([w], lr=0.1), start_factor=0)
except ValueError as e:
    print("ValueError:", e)
opt = torch.optim.SGD([w], lr=0.1)
sched = lr_scheduler.StepLR(opt, step_size=1)
sched.get_lr()

# warm-up with LambdaLR, as transformer tutorials write it
warmup = 3
run(lambda opt: lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / warmup)), base_lr=1.0)

# ReduceLROnPlateau is stepped with the validation loss
optimizer = torch.optim.SGD([w], lr=0.1)
scheduler = lr_scheduler.ReduceLROnPlateau(optimizer, mode='min', factor=0.5, patience=1)
val_losses = [1.0, 0.9, 0.95, 0.97, 0.96, 0.8, 0.85, 0.86, 0.9]
for epoch, val_loss in enumerate(val_losses):
    scheduler.step(val_loss)
    print(epoch, val_loss, optimizer.param_groups[0]["lr"], scheduler.num_bad_epochs, scheduler.best)
print(scheduler.get_last_lr())

# the warning when scheduler.step() comes before optimizer.step()
optimizer = torch.optim.SGD([w], lr=0.1)
scheduler = lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
scheduler.step()
print(optimizer.param_groups[0]["lr"])
