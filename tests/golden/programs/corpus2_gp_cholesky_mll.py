# Exact GP regression by hand, after Rasmussen & Williams Algorithm 2.1 as written in PyTorch GP-from-scratch posts
# (e.g. the GPR class with log_marginal_likelihood in github.com/.../gp.py found by search: L = cholesky(K + noise*I),
# alpha = cholesky_solve(y, L), -0.5 y^T alpha - sum(log(diag(L))) - n/2 log(2 pi)), optimised with Adam on the
# log length-scale and log noise. Fixed 1-D data (a sine).
import math
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)


class RBF(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_lengthscale = nn.Parameter(torch.tensor(0.0))
        self.log_variance = nn.Parameter(torch.tensor(0.0))

    def forward(self, x1, x2):
        d2 = (x1.unsqueeze(1) - x2.unsqueeze(0)).pow(2).sum(-1)
        return self.log_variance.exp() * torch.exp(-0.5 * d2 / self.log_lengthscale.exp() ** 2)


class GPR(nn.Module):
    def __init__(self, kernel):
        super().__init__()
        self.kernel = kernel
        self.log_noise = nn.Parameter(torch.tensor(-2.0))

    def log_marginal_likelihood(self, x, y):
        n = x.shape[0]
        K = self.kernel(x, x) + self.log_noise.exp() * torch.eye(n)
        L = torch.linalg.cholesky(K)
        alpha = torch.cholesky_solve(y.unsqueeze(-1), L)
        return (-0.5 * (y.unsqueeze(-1) * alpha).sum() - torch.log(torch.diagonal(L)).sum()
                - 0.5 * n * math.log(2 * math.pi))

    def predict(self, x, y, xs):
        K = self.kernel(x, x) + self.log_noise.exp() * torch.eye(x.shape[0])
        L = torch.linalg.cholesky(K)
        Ks = self.kernel(x, xs)
        alpha = torch.cholesky_solve(y.unsqueeze(-1), L)
        mean = Ks.T @ alpha
        v = torch.linalg.solve_triangular(L, Ks, upper=False)
        var = self.kernel(xs, xs).diagonal() - (v * v).sum(0)
        return mean.squeeze(-1), var


x = torch.linspace(0, 5, 8).unsqueeze(-1)
y = torch.sin(x).squeeze(-1) + 0.05 * torch.cos(7 * x).squeeze(-1)
gp = GPR(RBF())
opt = torch.optim.Adam(gp.parameters(), lr=0.1)
for it in range(30):
    opt.zero_grad()
    loss = -gp.log_marginal_likelihood(x, y)
    loss.backward()
    opt.step()
    if it % 10 == 0:
        print(it, f"{loss.item():.6f}", gp.kernel.log_lengthscale.grad)
print({n: round(p.item(), 5) for n, p in gp.named_parameters()})
with torch.no_grad():
    mean, var = gp.predict(x, y, torch.tensor([[1.0], [2.5], [6.0]]))
print(mean, var)
