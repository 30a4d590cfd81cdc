# requires: nn.Linear, optim.SGD
# Seed 000: shared encoder with two heads (retain_graph), and an SGD loop, with
# parameters and inputs set from literal values so the printed numbers are deterministic.
import torch
import torch.nn as nn
import torch.optim as optim


def pattern(rows, cols, mod, shift, div):
    """A deterministic (rows, cols) tensor: ((i % mod) - shift) / div."""
    return torch.tensor([[((r * cols + c) % mod - shift) / div for c in range(cols)] for r in range(rows)])


def set_params(layer, scale):
    with torch.no_grad():
        n_out, n_in = layer.weight.shape
        layer.weight.copy_(pattern(n_out, n_in, 7, 3, 1) * scale)
        layer.bias.copy_(torch.arange(n_out, dtype=torch.float32) * scale - 0.1)


encoder = nn.Linear(10, 5)
head_a = nn.Linear(5, 2)
head_b = nn.Linear(5, 3)
for i, layer in enumerate((encoder, head_a, head_b)):
    set_params(layer, 0.1 * (i + 1))
x = pattern(4, 10, 5, 2, 4)
features = encoder(x)
out_a = head_a(features)
out_b = head_b(features)
loss_a = out_a.mean()
loss_b = out_b.mean()
loss_a.backward(retain_graph=True)
loss_b.backward()
print(f"encoder bias grad: {encoder.bias.grad}")

model = nn.Linear(5, 1)
set_params(model, 0.05)
optimizer = optim.SGD(model.parameters(), lr=0.01)
x = pattern(8, 5, 3, 1, 2)
y = pattern(8, 1, 4, 0, 4)
for step in range(3):
    optimizer.zero_grad()
    pred = model(x)
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    print(f"Step {step}: loss={loss.item():.4f}, bias.grad={model.bias.grad.item():.4f}")

model = nn.Linear(10, 1)
set_params(model, 0.02)
x = pattern(32, 10, 9, 4, 8)
y = pattern(32, 1, 3, 0, 3)
for i in range(3):
    pred = model(x)
    loss = ((pred - y) ** 2).mean()
    loss.backward(retain_graph=True)
    print(f"Step {i}: loss={loss.item():.4f}, graph retained")
