# requires: nn.functional.binary_cross_entropy
# Logistic regression from scratch, as course notebooks write it: parameters as plain tensors,
# sigmoid(X @ w + b), F.binary_cross_entropy, and a hand-written SGD step under no_grad.
import torch
import torch.nn.functional as F

X = torch.tensor([[2.0, 1.0], [1.5, 2.5], [3.0, 0.5], [0.5, 0.5], [-1.0, 0.0], [0.0, -1.5], [-2.0, -0.5],
                  [1.0, -1.0]])
y = torch.tensor([1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0])
w = torch.zeros(2, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.5
for epoch in range(15):
    p = torch.sigmoid(X @ w + b)
    loss = F.binary_cross_entropy(p, y)
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()
    if epoch % 3 == 0:
        print(f"epoch {epoch}, loss {loss.item():.5f}, grad_fn {loss.grad_fn.name()}")
print(w, b)
with torch.no_grad():
    p = torch.sigmoid(X @ w + b)
print((p > 0.5).float(), ((p > 0.5).float() == y).float().mean())

# the same loss written out by hand gives the same value, and the same gradient
w2 = w.detach().clone().requires_grad_()
p = torch.sigmoid(X @ w2 + b)
manual = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
builtin = F.binary_cross_entropy(p, y)
print(f"{manual.item():.6f} {builtin.item():.6f}")
g_manual, = torch.autograd.grad(manual, w2, retain_graph=True)
g_builtin, = torch.autograd.grad(builtin, w2)
print(g_manual, g_builtin, torch.allclose(g_manual, g_builtin))
