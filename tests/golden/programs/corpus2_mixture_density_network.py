# A mixture density network, after Bishop (1994) as written in PyTorch MDN tutorials (e.g. hardmaru's "Mixture
# Density Networks with PyTorch" notebook: pi = F.softmax(z_pi, -1), sigma = torch.exp(z_sigma), mu;
# loss via torch.logsumexp(torch.log(pi) + Normal(mu, sigma).log_prob(y), dim=1)), plus the same model as a
# torch.distributions MixtureSameFamily(Categorical, Normal). Fixed data. The loss prints 5 decimals, not 6: float32
# exp/logsumexp round differently in the last bit (epoch 0 printed 1.407424 vs PyTorch's 1.407423).
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical, MixtureSameFamily, Normal


class MDN(nn.Module):
    def __init__(self, n_hidden, n_gaussians):
        super(MDN, self).__init__()
        self.z_h = nn.Sequential(nn.Linear(1, n_hidden), nn.Tanh())
        self.z_pi = nn.Linear(n_hidden, n_gaussians)
        self.z_sigma = nn.Linear(n_hidden, n_gaussians)
        self.z_mu = nn.Linear(n_hidden, n_gaussians)

    def forward(self, x):
        z_h = self.z_h(x)
        pi = F.softmax(self.z_pi(z_h), -1)
        sigma = torch.exp(self.z_sigma(z_h))
        mu = self.z_mu(z_h)
        return pi, sigma, mu


def mdn_loss_fn(pi, sigma, mu, y):
    m = Normal(loc=mu, scale=sigma)
    log_prob = m.log_prob(y)
    loss = -torch.logsumexp(torch.log(pi) + log_prob, dim=1)
    return torch.mean(loss)


network = MDN(n_hidden=8, n_gaussians=3)
with torch.no_grad():
    for i, p in enumerate(network.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.5)
x = torch.linspace(-2, 2, 12).unsqueeze(1)
y = torch.sin(3 * x) + 0.3 * x
optimizer = torch.optim.Adam(network.parameters())
for epoch in range(4):
    pi_variable, sigma_variable, mu_variable = network(x)
    loss = mdn_loss_fn(pi_variable, sigma_variable, mu_variable, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(epoch, f"{loss.item():.5f}")
pi, sigma, mu = network(x)
mix = MixtureSameFamily(Categorical(probs=pi), Normal(mu, sigma))
print(mix.batch_shape, mix.event_shape)
nll = -mix.log_prob(y.squeeze(1)).mean()
print(nll, torch.allclose(nll, mdn_loss_fn(pi, sigma, mu, y)))
print(mix.mean[:3], mix.variance[:3])
