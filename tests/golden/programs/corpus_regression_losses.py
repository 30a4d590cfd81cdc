# Follows the loss-function guides of tutorials and blog posts ("which regression loss?"): MSELoss,
# L1Loss, SmoothL1Loss (beta) and HuberLoss (delta) on the same predictions, with reduction='none'
# /'sum'/'mean', their gradients, and a robust regression fit with outliers under each loss.
import torch
import torch.nn as nn
import torch.nn.functional as F

pred = torch.tensor([2.5, 0.0, 2.0, 8.0, -1.5], requires_grad=True)
target = torch.tensor([3.0, -0.5, 2.0, 7.0, 1.0])

for loss_fn in [nn.MSELoss(), nn.L1Loss(), nn.SmoothL1Loss(), nn.SmoothL1Loss(beta=0.5), nn.HuberLoss(),
                nn.HuberLoss(delta=2.0)]:
    pred.grad = None
    loss = loss_fn(pred, target)
    loss.backward()
    print(loss_fn, loss, pred.grad)

print(F.l1_loss(pred, target, reduction='none'), F.smooth_l1_loss(pred, target, reduction='sum'))
print(F.huber_loss(pred, target, reduction='none', delta=1.5))
print(nn.L1Loss(reduction='sum')(pred, target).grad_fn.name(), F.smooth_l1_loss(pred, target).grad_fn.name(),
      F.huber_loss(pred, target).grad_fn.name())

# the target can require grad too
t = target.clone().requires_grad_()
F.smooth_l1_loss(pred.detach(), t).backward()
print(t.grad)

# a line fit with two outliers: the L1-type losses are pulled less
x = torch.linspace(0, 1, 6).unsqueeze(1)
y = 2 * x + 1
y[4] += 5.0
y[5] -= 4.0
for loss_fn in [nn.MSELoss(), nn.L1Loss(), nn.HuberLoss(delta=0.5)]:
    model = nn.Linear(1, 1)
    with torch.no_grad():
        model.weight.fill_(0.0)
        model.bias.fill_(0.0)
    opt = torch.optim.SGD(model.parameters(), lr=0.25)
    for epoch in range(30):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    print(type(loss_fn).__name__, f"{loss.item():.4f}", f"w={model.weight.item():.4f} b={model.bias.item():.4f}")

try:
    F.huber_loss(pred, target, delta=0.0)
except RuntimeError as e:
    print("RuntimeError:", e)
print(F.l1_loss(torch.tensor([1.0, 2.0]), torch.tensor([[1.0], [3.0]])))
