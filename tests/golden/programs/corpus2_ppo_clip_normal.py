# PPO clipped surrogate with a Gaussian policy, after Spinning Up's PPO (https://spinningup.openai.com/en/latest/
# algorithms/ppo.html, ppo.py compute_loss_pi): pi = Normal(mu, std); logp = pi.log_prob(act).sum(axis=-1);
# ratio = torch.exp(logp - logp_old); clip_adv = torch.clamp(ratio, 1-clip_ratio, 1+clip_ratio) * adv;
# loss_pi = -(torch.min(ratio * adv, clip_adv)).mean(); approx_kl, ent, clipfrac. Fixed observations and actions.
import numpy as np
import torch
import torch.nn as nn
from torch.distributions.normal import Normal


class MLPGaussianActor(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        log_std = -0.5 * np.ones(act_dim, dtype=np.float32)
        self.log_std = torch.nn.Parameter(torch.as_tensor(log_std))
        self.mu_net = nn.Sequential(nn.Linear(obs_dim, 8), nn.Tanh(), nn.Linear(8, act_dim))

    def _distribution(self, obs):
        mu = self.mu_net(obs)
        std = torch.exp(self.log_std)
        return Normal(mu, std)

    def _log_prob_from_distribution(self, pi, act):
        return pi.log_prob(act).sum(axis=-1)

    def forward(self, obs, act=None):
        pi = self._distribution(obs)
        logp_a = None
        if act is not None:
            logp_a = self._log_prob_from_distribution(pi, act)
        return pi, logp_a


pi_net = MLPGaussianActor(3, 2)
with torch.no_grad():
    for i, p in enumerate(pi_net.mu_net.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.5)
obs = torch.sin(torch.arange(5 * 3) * 0.5).reshape(5, 3)
act = torch.cos(torch.arange(5 * 2) * 0.9).reshape(5, 2)
adv = torch.tensor([0.5, -1.0, 1.5, 0.2, -0.3])
with torch.no_grad():
    _, logp_old = pi_net(obs, act)
    logp_old = logp_old - 0.1 * torch.arange(5.0)
clip_ratio = 0.2
opt = torch.optim.Adam(pi_net.parameters(), lr=3e-3)
for i in range(3):
    opt.zero_grad()
    pi, logp = pi_net(obs, act)
    ratio = torch.exp(logp - logp_old)
    clip_adv = torch.clamp(ratio, 1 - clip_ratio, 1 + clip_ratio) * adv
    loss_pi = -(torch.min(ratio * adv, clip_adv)).mean()
    approx_kl = (logp_old - logp).mean().item()
    ent = pi.entropy().mean().item()
    clipped = ratio.gt(1 + clip_ratio) | ratio.lt(1 - clip_ratio)
    clipfrac = torch.as_tensor(clipped, dtype=torch.float32).mean().item()
    pi_info = dict(kl=round(approx_kl, 5), ent=round(ent, 5), cf=clipfrac)
    loss_pi.backward()
    opt.step()
    print(i, round(loss_pi.item(), 5), pi_info)
print(pi_net.log_std)
