# Solving an ODE with a network and a trial solution, after Lagaris et al. (1998) as written in PyTorch blog
# tutorials ("Solving differential equations with neural networks": y_t = A + x * N(x); dy/dx from
# torch.autograd.grad(y, x, torch.ones_like(y), create_graph=True); loss = mean((dy/dx + y)^2)), with LBFGS and a closure.
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)
N = nn.Sequential(nn.Linear(1, 6), nn.Sigmoid(), nn.Linear(6, 1, bias=False))
with torch.no_grad():
    for i, p in enumerate(N.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.9 + i).reshape(p.shape))
A = 1.0
Psi_t = lambda x: A + x * N(x)
f = lambda x, Psi: -Psi


def loss(x):
    x.requires_grad = True
    outputs = Psi_t(x)
    Psi_t_x = torch.autograd.grad(outputs, x, grad_outputs=torch.ones_like(outputs), create_graph=True)[0]
    return torch.mean((Psi_t_x - f(x, outputs)) ** 2)


optimizer = torch.optim.LBFGS(N.parameters())
x = torch.linspace(0, 2, 11)[:, None]


def closure():
    optimizer.zero_grad()
    l = loss(x)
    l.backward()
    return l


for i in range(3):
    l = optimizer.step(closure)
    print(i, f"{l.item():.8f}")
xx = torch.tensor([[0.0], [1.0], [2.0]])
with torch.no_grad():
    yy = Psi_t(xx)
print(yy.squeeze(), torch.exp(-xx).squeeze())
