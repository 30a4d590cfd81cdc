# torch.distributions as VAE and policy-gradient code uses it: Normal (log_prob, entropy, rsample, the VAE's KL term),
# Categorical (REINFORCE's log_prob times a return, an entropy bonus), Bernoulli, Uniform, and the argument checks.
import math
import torch
from torch.distributions import Bernoulli, Categorical, Normal, Uniform, kl_divergence

loc = torch.tensor([0.0, 1.0, -2.0], requires_grad=True)
scale = torch.tensor([1.0, 0.5, 2.0], requires_grad=True)
p = Normal(loc, scale)
print(p, p.batch_shape, p.event_shape, p.mean, p.stddev, p.variance)
value = torch.tensor([0.5, 1.5, 0.0])
lp = p.log_prob(value)
print(lp, lp.grad_fn.name())
(lp.sum() + p.entropy().sum()).backward()
print(loc.grad, scale.grad)
print(Normal(0.0, 1.0), Normal(0.0, 1.0).log_prob(torch.tensor(1.0)), Normal(torch.zeros(2), 1.0).entropy())
z = p.rsample((4,))
print(z.shape, z.requires_grad, p.sample((2,)).requires_grad, p.sample().shape)
q = Normal(torch.tensor([0.5, 0.0, 0.0]), torch.tensor([1.0, 1.0, 1.0]))
kl = kl_divergence(p, q)
print(kl, kl.grad_fn.name())
mu, logvar = torch.tensor([[0.2, -0.1]], requires_grad=True), torch.tensor([[0.1, -0.3]], requires_grad=True)
vae_kl = kl_divergence(Normal(mu, (0.5 * logvar).exp()), Normal(torch.zeros_like(mu), torch.ones_like(mu))).sum()
vae_kl.backward()
print(vae_kl, mu.grad, logvar.grad)

logits = torch.tensor([[1.0, 2.0, 0.5], [0.0, 0.0, 3.0]], requires_grad=True)
c = Categorical(logits=logits)
print(c, c.batch_shape, c.param_shape, c.logits, c.probs)
actions = torch.tensor([1, 2])
loss = -(c.log_prob(actions) * torch.tensor([1.5, -0.5])).sum() - 0.01 * c.entropy().sum()
loss.backward()
print(c.log_prob(actions), c.entropy(), loss, logits.grad)
cp = Categorical(probs=torch.tensor([1.0, 3.0]))
print(cp.probs, cp.logits, cp.sample((5,)).shape, cp.sample().dtype)
print(kl_divergence(Categorical(logits=torch.tensor([0.0, 1.0])), Categorical(probs=torch.tensor([0.5, 0.5]))))

b = Bernoulli(logits=torch.tensor([0.0, 2.0, -1.0]))
print(b, b.probs, b.log_prob(torch.tensor([1.0, 0.0, 1.0])), b.entropy(), b.mean, b.variance, b.sample((2,)).shape)
bp = Bernoulli(probs=torch.tensor([0.3]))
print(bp, bp.logits, kl_divergence(bp, Bernoulli(probs=torch.tensor([0.6]))))

u = Uniform(torch.tensor([0.0, -1.0]), torch.tensor([2.0, 1.0]))
print(u, u.log_prob(torch.tensor([1.0, 0.5])), u.entropy(), u.mean, u.variance, u.rsample((3,)).shape)
print(Uniform(0.0, torch.ones(2)))

for bad in [lambda: Normal(torch.tensor([0.0]), torch.tensor([-1.0])),
            lambda: Normal(0.0, 1.0).log_prob(torch.tensor([float("nan")])),
            lambda: Bernoulli(probs=torch.tensor([1.5])),
            lambda: Categorical(probs=torch.tensor([0.5, -0.1])),
            lambda: Bernoulli(probs=torch.tensor([0.3])).log_prob(torch.tensor([0.5])),
            lambda: Categorical(logits=torch.zeros(3)).log_prob(torch.tensor(3)),
            lambda: Uniform(0.0, 1.0).log_prob(torch.tensor(2.0)),
            lambda: Uniform(torch.tensor([1.0]), torch.tensor([0.0])),
            lambda: Categorical(torch.zeros(2), torch.zeros(2)),
            lambda: Normal(torch.zeros(3), 1.0).log_prob(torch.zeros(2))]:
    try:
        bad()
    except ValueError as e:
        print("ValueError:", e)
print(Normal(torch.tensor([0.0]), torch.tensor([-1.0]), validate_args=False).scale)
