# Bayes by Backprop for a linear layer, after Blundell et al. (2015) as written in PyTorch blog tutorials
# (e.g. "Bayesian Neural Networks with PyTorch": weight_mu, weight_rho, sigma = torch.log1p(torch.exp(rho)),
# w = mu + sigma * epsilon, log prior = Normal(0, 1).log_prob(w).sum(), log variational posterior
# = Normal(mu, sigma).log_prob(w).sum(), loss = log_q - log_p + nll). epsilon is fixed instead of sampled.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal


class BayesianLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight_mu = nn.Parameter(torch.sin(torch.arange(in_features * out_features) * 0.5).reshape(out_features, in_features) * 0.2)
        self.weight_rho = nn.Parameter(torch.full((out_features, in_features), -3.0))
        self.bias_mu = nn.Parameter(torch.zeros(out_features))
        self.bias_rho = nn.Parameter(torch.full((out_features,), -3.0))
        self.prior = Normal(0, 1)
        self.log_prior = 0
        self.log_variational_posterior = 0

    def forward(self, input, k):
        w_sigma = torch.log1p(torch.exp(self.weight_rho))
        b_sigma = torch.log1p(torch.exp(self.bias_rho))
        eps_w = torch.cos(torch.arange(self.weight_mu.numel()) * 0.9 + k).reshape(self.weight_mu.shape)
        eps_b = torch.cos(torch.arange(self.bias_mu.numel()) * 1.1 + k)
        weight = self.weight_mu + w_sigma * eps_w
        bias = self.bias_mu + b_sigma * eps_b
        self.log_prior = self.prior.log_prob(weight).sum() + self.prior.log_prob(bias).sum()
        self.log_variational_posterior = (Normal(self.weight_mu, w_sigma).log_prob(weight).sum()
                                          + Normal(self.bias_mu, b_sigma).log_prob(bias).sum())
        return F.linear(input, weight, bias)


layer = BayesianLinear(3, 2)
x = torch.sin(torch.arange(5 * 3) * 0.6).reshape(5, 3)
y = torch.tensor([0, 1, 1, 0, 1])
opt = torch.optim.Adam(layer.parameters(), lr=0.01)
for step in range(4):
    opt.zero_grad()
    out = layer(x, step)
    nll = F.cross_entropy(out, y, reduction='sum')
    loss = (layer.log_variational_posterior - layer.log_prior) / 10 + nll
    loss.backward()
    opt.step()
    print(step, f"{loss.item():.5f}", f"{layer.log_prior.item():.5f}", f"{layer.log_variational_posterior.item():.4f}")
print(layer.weight_rho.grad)
print(F.softplus(layer.bias_rho))
