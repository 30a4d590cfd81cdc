# Follows the gradient clipping pattern from RNN tutorials and training scripts: loss.backward(), then
# torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm) before optimizer.step(); also
# clip_grad_value_ and the returned total norm that training logs print.
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.arange(p.numel(), dtype=torch.float32).reshape(p.shape) * 0.3 - i)
x = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
target = torch.tensor([[10.0, -10.0], [5.0, 5.0]])
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
max_norm = 1.0
for step in range(4):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), target)
    loss.backward()
    total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    clipped = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters()))
    optimizer.step()
    print(f"step {step} loss {loss.item():.4f} grad norm before {total_norm.item():.4f} after {clipped.item():.4f}")
print(type(total_norm).__name__, total_norm.dtype, total_norm.shape)

# clip_grad_value_ clamps each element
optimizer.zero_grad()
nn.functional.mse_loss(model(x), target).backward()
torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)
print(model[2].weight.grad)
print(max(p.grad.abs().max().item() for p in model.parameters()))

# the inf-norm and a single tensor argument
w = torch.tensor([3.0, -4.0], requires_grad=True)
(w * torch.tensor([1.0, 2.0])).sum().backward()
print(torch.nn.utils.clip_grad_norm_(w, max_norm=1.0, norm_type=float('inf')), w.grad)
w.grad = torch.tensor([3.0, 4.0])
print(torch.nn.utils.clip_grad_norm_([w], 10.0), w.grad)
