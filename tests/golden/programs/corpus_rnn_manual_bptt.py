# Follows the "RNN from scratch" tutorials and course notebooks: an Elman RNN unrolled by hand with
# tanh, retain_grad() on each hidden state to watch gradients flow back through time (and vanish),
# gradient clipping, and a few training steps on a fixed sequence.
import torch

W_xh = torch.tensor([[0.5, -0.3], [0.2, 0.8]], requires_grad=True)
W_hh = torch.tensor([[0.9, -0.2], [0.1, 0.7]], requires_grad=True)
b_h = torch.tensor([0.0, 0.1], requires_grad=True)
W_hy = torch.tensor([[1.0], [-1.0]], requires_grad=True)
params = [W_xh, W_hh, b_h, W_hy]

xs = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, -0.5], [-1.0, 0.0]])
target = torch.tensor([0.25])


def forward(xs):
    h = torch.zeros(2)
    hs = []
    for x in xs:
        h = torch.tanh(x @ W_xh + h @ W_hh + b_h)
        h.retain_grad()
        hs.append(h)
    return (h @ W_hy), hs


y, hs = forward(xs)
loss = ((y - target) ** 2).sum()
loss.backward()
print(f"{loss.item():.6f}")
for t, h in enumerate(hs):
    print(t, h.grad.norm().item() > 0, f"{h.grad.norm().item():.5f}")
print(W_hh.grad)
print(hs[-1].grad_fn, hs[0].is_leaf)

lr = 0.1
for step in range(5):
    for p in params:
        p.grad = None
    y, hs = forward(xs)
    loss = ((y - target) ** 2).sum()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(params, max_norm=0.5)
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
    print(step, f"{loss.item():.6f}", f"{norm.item():.5f}")

# truncated backpropagation through time: detach the hidden state between chunks
h = torch.zeros(2)
for chunk in (xs[:2], xs[2:4], xs[4:]):
    h = h.detach()
    for x in chunk:
        h = torch.tanh(x @ W_xh + h @ W_hh + b_h)
    print(h.grad_fn.name(), h.requires_grad)
