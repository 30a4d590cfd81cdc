# An affine coupling layer (RealNVP), after the "Normalizing Flows" UvA DL tutorial 11
# (https://uvadlc-notebooks.readthedocs.io/en/latest/tutorial_notebooks/tutorial11/NF_image_modeling.html,
# CouplingLayer: s, t = nn_out.chunk(2, dim=1); s = torch.tanh(s / s_fac) * s_fac; z = (z + t) * torch.exp(s);
# ldj += s.sum(dim=[1]); prior = torch.distributions.normal.Normal(loc=0.0, scale=1.0)). Fixed data, 1-D features.
import torch
import torch.nn as nn


class CouplingLayer(nn.Module):
    def __init__(self, network, mask, c_in):
        super().__init__()
        self.network = network
        self.scaling_factor = nn.Parameter(torch.zeros(c_in))
        self.register_buffer('mask', mask)

    def forward(self, z, ldj, reverse=False):
        z_in = z * self.mask
        nn_out = self.network(z_in)
        s, t = nn_out.chunk(2, dim=1)
        s_fac = self.scaling_factor.exp().view(1, -1)
        s = torch.tanh(s / s_fac) * s_fac
        s = s * (1 - self.mask)
        t = t * (1 - self.mask)
        if not reverse:
            z = (z + t) * torch.exp(s)
            ldj += s.sum(dim=[1])
        else:
            z = (z * torch.exp(-s)) - t
            ldj -= s.sum(dim=[1])
        return z, ldj


def make_net():
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
    with torch.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.3)
    return net


mask = torch.tensor([1.0, 0.0, 1.0, 0.0])
layers = nn.ModuleList([CouplingLayer(make_net(), mask, 4), CouplingLayer(make_net(), 1 - mask, 4)])
prior = torch.distributions.normal.Normal(loc=0.0, scale=1.0)
x = torch.sin(torch.arange(6 * 4) * 0.55).reshape(6, 4) * 2
opt = torch.optim.Adam(layers.parameters(), lr=1e-2)
for step in range(5):
    z, ldj = x, torch.zeros(x.shape[0])
    for layer in layers:
        z, ldj = layer(z, ldj)
    log_pz = prior.log_prob(z).sum(dim=[1])
    log_px = ldj + log_pz
    nll = -log_px
    bpd = nll.mean()
    opt.zero_grad()
    bpd.backward()
    opt.step()
    print(step, f"{bpd.item():.5f}")
with torch.no_grad():
    z, ldj = x, torch.zeros(6)
    for layer in layers:
        z, ldj = layer(z, ldj)
    for layer in reversed(layers):
        z, ldj = layer(z, ldj, reverse=True)
print(torch.allclose(z, x, atol=1e-5), ldj.abs().max() < 1e-5)
print(layers[0].scaling_factor.grad)
