# A neural ODE integrated with fixed-step solvers, after torchdiffeq's ode_demo.py
# (https://github.com/rtqichen/torchdiffeq/blob/master/examples/ode_demo.py: ODEFunc with nn.Sequential(nn.Linear(2, 50),
# nn.Tanh(), nn.Linear(50, 2)), nn.init.normal_(m.weight, mean=0, std=0.1), forward(self, t, y): return self.net(y**3),
# true_A = [[-0.1, 2.0], [-2.0, -0.1]], loss = torch.mean(torch.abs(pred_y - batch_y)), RMSprop) with odeint replaced by
# hand-written Euler / RK4 steps (no torchdiffeq). Weights fixed instead of normal_.
import torch
import torch.nn as nn
import torch.optim as optim

true_y0 = torch.tensor([[2., 0.]])
t = torch.linspace(0., 1., 11)
true_A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]])


class Lambda(nn.Module):
    def forward(self, t, y):
        return torch.mm(y ** 3, true_A)


def rk4(func, y0, t):
    ys = [y0]
    y = y0
    for t0, t1 in zip(t[:-1], t[1:]):
        h = t1 - t0
        k1 = func(t0, y)
        k2 = func(t0 + h / 2, y + h * k1 / 2)
        k3 = func(t0 + h / 2, y + h * k2 / 2)
        k4 = func(t1, y + h * k3)
        y = y + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6
        ys.append(y)
    return torch.stack(ys)


with torch.no_grad():
    true_y = rk4(Lambda(), true_y0, t)
print(true_y[-1])


class ODEFunc(nn.Module):
    def __init__(self):
        super(ODEFunc, self).__init__()
        self.net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
        for i, m in enumerate(self.net.modules()):
            if isinstance(m, nn.Linear):
                with torch.no_grad():
                    m.weight.copy_(torch.sin(torch.arange(m.weight.numel()) * 0.7 + i).reshape(m.weight.shape) * 0.1)
                nn.init.constant_(m.bias, val=0)

    def forward(self, t, y):
        return self.net(y ** 3)


func = ODEFunc()
optimizer = optim.RMSprop(func.parameters(), lr=1e-3)
for itr in range(1, 6):
    optimizer.zero_grad()
    pred_y = rk4(func, true_y0, t)
    loss = torch.mean(torch.abs(pred_y - true_y))
    loss.backward()
    optimizer.step()
    print('Iter {:04d} | Total Loss {:.6f}'.format(itr, loss.item()))
print(pred_y.shape, func.net[2].bias.grad)
