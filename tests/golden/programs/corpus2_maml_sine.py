# MAML on sine regression, after Finn et al. (2017) as written in from-scratch PyTorch tutorials (functional forward
# with a list of weights, grads = torch.autograd.grad(loss, weights, create_graph=True), fast weights
# w - inner_lr * g, meta-loss summed over tasks and meta_optimizer.step()). Tasks use fixed amplitudes/phases.
# Its losses print six digits; OpenBLAS's AVX-512 matmul kernel sums in another order than its AVX2 one and
# changes the last (measured: 0.177231 against PyTorch's 0.177232, an error of 6e-6).
# tolerance: 2e-5
import torch
import torch.nn as nn
import torch.nn.functional as F


class MAMLModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))

    def parameterised(self, x, weights):
        x = F.linear(x, weights[0], weights[1])
        x = F.relu(x)
        x = F.linear(x, weights[2], weights[3])
        x = F.relu(x)
        return F.linear(x, weights[4], weights[5])


net = MAMLModel()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.5)
weights = list(net.parameters())
meta_optimiser = torch.optim.Adam(weights, 1e-3)
inner_lr = 0.01
criterion = nn.MSELoss()
tasks = [(1.0, 0.0), (2.0, 1.0), (0.5, 2.0)]
for epoch in range(3):
    meta_loss = 0
    for amp, phase in tasks:
        X = torch.linspace(-5, 5, 10).unsqueeze(1)
        y = amp * torch.sin(X + phase)
        temp_weights = [w.clone() for w in weights]
        for step in range(2):
            loss = criterion(net.parameterised(X, temp_weights), y) / 10
            grad = torch.autograd.grad(loss, temp_weights, create_graph=True)
            temp_weights = [w - inner_lr * g for w, g in zip(temp_weights, grad)]
        X2 = torch.linspace(-4.5, 4.5, 10).unsqueeze(1)
        y2 = amp * torch.sin(X2 + phase)
        meta_loss = meta_loss + criterion(net.parameterised(X2, temp_weights), y2) / 10
    meta_grads = torch.autograd.grad(meta_loss, weights)
    for w, g in zip(weights, meta_grads):
        w.grad = g
    meta_optimiser.step()
    print(epoch, f"{meta_loss.item():.6f}")
print(weights[5])
