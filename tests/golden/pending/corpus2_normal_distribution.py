# torch.distributions.Normal as variational inference code uses it, after the torch.distributions docs
# (https://pytorch.org/docs/stable/distributions.html: "the reparameterization trick": params = policy_network(state);
# m = Normal(*params); action = m.rsample(); loss = -reward) and kl_divergence between Normals.
# rsample's noise is replaced by loc + scale * fixed eps so PyTorch and chibigrad see the same numbers.
import torch
from torch.distributions import Normal, kl_divergence

loc = torch.tensor([0.0, 1.0, -0.5], requires_grad=True)
log_scale = torch.tensor([0.0, -0.3, 0.4], requires_grad=True)
m = Normal(loc, log_scale.exp())
print(m)
print(m.mean, m.stddev, m.variance)
value = torch.tensor([0.5, 0.5, 0.5])
lp = m.log_prob(value)
print(lp)
print(m.entropy())
print(m.cdf(value))
print(m.icdf(torch.tensor([0.1, 0.5, 0.9])))
print(m.batch_shape, m.event_shape)
eps = torch.tensor([0.3, -1.2, 0.8])
z = loc + log_scale.exp() * eps
loss = -(lp.sum()) + (z ** 2).sum()
loss.backward()
print(loc.grad, log_scale.grad)
q = Normal(loc, log_scale.exp())
p = Normal(torch.zeros(3), torch.ones(3))
kl = kl_divergence(q, p)
print(kl)
loc.grad = None
kl.sum().backward()
print(loc.grad)
print(Normal(0.0, 1.0).log_prob(torch.tensor(0.0)))
s = Normal(torch.tensor([0.0]), torch.tensor([1.0])).sample((4,))
print(s.shape)
