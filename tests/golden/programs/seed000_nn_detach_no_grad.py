# requires: nn.Linear
# Seed 000: detach() cuts the graph, no_grad records nothing (nn.Linear; prints no random values).
import torch
import torch.nn as nn

encoder = nn.Linear(10, 5)
decoder = nn.Linear(5, 10)
x = torch.randn(4, 10)
encoded = encoder(x)
encoded_detached = encoded.detach()
reconstructed = decoder(encoded_detached)
loss = ((reconstructed - x) ** 2).mean()
loss.backward()
print(f"decoder bias grad: {decoder.bias.grad is not None}")
print(f"encoder bias grad: {encoder.bias.grad}")

model = nn.Linear(10, 1)
x = torch.randn(4, 10)
with torch.no_grad():
    out = model(x)
print(f"out.requires_grad (no_grad): {out.requires_grad}")
print(f"out.grad_fn: {out.grad_fn}")
out_live = model(x)
out_detached = out_live.detach()
print(f"out_live.requires_grad: {out_live.requires_grad}")
print(f"out_detached.requires_grad: {out_detached.requires_grad}")
print(type(out_live.grad_fn).__name__, out_live.shape, out_detached.shape)
