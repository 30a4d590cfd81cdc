# A physics-informed network for Burgers' equation, after the PINN primer found by search (pde_residual:
# u_x = autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)[0]; u_t likewise;
# u_xx = autograd.grad(u_x, x, ...)[0]; f = u_t + u * u_x - nu * u_xx) and Raissi et al.'s PINNs.
# Collocation points are a fixed grid instead of torch.rand; a few Adam steps.
import math
import torch
import torch.nn as nn
import torch.autograd as autograd


class PINN(nn.Module):
    def __init__(self, layers):
        super(PINN, self).__init__()
        self.activation = nn.Tanh()
        self.net = nn.Sequential()
        for i in range(len(layers) - 1):
            self.net.add_module(f"layer_{i}", nn.Linear(layers[i], layers[i + 1]))
            if i < len(layers) - 2:
                self.net.add_module(f"tanh_{i}", nn.Tanh())

    def forward(self, x):
        return self.net(x)


def pde_residual(model, x, t, nu):
    x.requires_grad_(True)
    t.requires_grad_(True)
    inputs = torch.cat([x, t], dim=1)
    u = model(inputs)
    u_x = autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)[0]
    u_t = autograd.grad(u, t, grad_outputs=torch.ones_like(u), create_graph=True)[0]
    u_xx = autograd.grad(u_x, x, grad_outputs=torch.ones_like(u_x), create_graph=True)[0]
    f = u_t + u * u_x - nu * u_xx
    return f


model = PINN([2, 10, 10, 1])
print(model)
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.6)
nu = 0.01 / math.pi
x_f = torch.linspace(-1, 1, 8).repeat(3).unsqueeze(1)
t_f = torch.linspace(0, 1, 3).repeat_interleave(8).unsqueeze(1)
x_0 = torch.linspace(-1, 1, 6).unsqueeze(1)
t_0 = torch.zeros_like(x_0)
u_0 = -torch.sin(math.pi * x_0)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(5):
    optimizer.zero_grad()
    f = pde_residual(model, x_f.clone(), t_f.clone(), nu)
    loss_f = torch.mean(f ** 2)
    loss_0 = torch.mean((model(torch.cat([x_0, t_0], dim=1)) - u_0) ** 2)
    loss = loss_f + loss_0
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch}: loss_f={loss_f.item():.6f} loss_0={loss_0.item():.6f}")
print(model.net.layer_0.weight.grad[:2])
