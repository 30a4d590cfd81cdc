# A planar normalising flow fitted by maximum likelihood, after Rezende & Mohamed (2015) as written in
# PyTorch flow tutorials (e.g. "Normalizing flows in PyTorch" blog posts: f(z) = z + u * tanh(w^T z + b),
# log|det J| = log|1 + u^T psi(z)|, base = MultivariateNormal(torch.zeros(2), torch.eye(2))). Fixed data.
import torch
import torch.nn as nn
from torch.distributions import MultivariateNormal


class PlanarFlow(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([0.5, -0.3]))
        self.u = nn.Parameter(torch.tensor([0.2, 0.4]))
        self.b = nn.Parameter(torch.tensor(0.1))

    def forward(self, z):
        lin = z @ self.w + self.b
        f = z + self.u * torch.tanh(lin).unsqueeze(-1)
        psi = (1 - torch.tanh(lin) ** 2).unsqueeze(-1) * self.w
        log_det = torch.log(torch.abs(1 + psi @ self.u) + 1e-8)
        return f, log_det


base = MultivariateNormal(torch.zeros(2), torch.eye(2))
print(base.batch_shape, base.event_shape)
flows = nn.ModuleList([PlanarFlow(2) for _ in range(2)])
x = torch.stack([torch.sin(torch.arange(10) * 0.6), torch.cos(torch.arange(10) * 0.4) * 1.5], dim=1)
opt = torch.optim.Adam(flows.parameters(), lr=0.05)
for step in range(20):
    z = x
    sum_log_det = torch.zeros(x.shape[0])
    for flow in flows:
        z, ld = flow(z)
        sum_log_det = sum_log_det + ld
    loss = -(base.log_prob(z) + sum_log_det).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(step, f"{loss.item():.5f}")
print(flows[0].u, flows[1].w.grad)
print(base.log_prob(torch.tensor([[0.0, 0.0], [1.0, -1.0]])))
mvn = MultivariateNormal(torch.tensor([1.0, -1.0]), covariance_matrix=torch.tensor([[2.0, 0.3], [0.3, 0.5]]))
print(mvn.log_prob(torch.tensor([0.5, 0.5])), mvn.entropy())
print(mvn.scale_tril)
