# Distributions built from transforms, after the torch.distributions docs (TransformedDistribution example:
# base_distribution = Uniform(0, 1); transforms = [SigmoidTransform().inv, AffineTransform(loc=a, scale=b)];
# logistic = TransformedDistribution(base_distribution, transforms)) and LogNormal / Independent / Bernoulli /
# Beta / Gamma / Dirichlet / Uniform as Bayesian-modelling code uses them (log_prob, entropy, mean, gradients).
import torch
from torch.distributions import (AffineTransform, Bernoulli, Beta, Dirichlet, ExpTransform, Gamma, Independent,
                                 LogNormal, Normal, SigmoidTransform, TransformedDistribution, Uniform)

a = torch.tensor(0.5, requires_grad=True)
b = torch.tensor(2.0, requires_grad=True)
base_distribution = Uniform(0, 1)
transforms = [SigmoidTransform().inv, AffineTransform(loc=a, scale=b)]
logistic = TransformedDistribution(base_distribution, transforms)
v = torch.tensor([0.0, 1.0, 3.0])
lp = logistic.log_prob(v)
print(lp)
lp.sum().backward()
print(a.grad, b.grad)
ln1 = LogNormal(torch.tensor(0.2), torch.tensor(0.5))
ln2 = TransformedDistribution(Normal(torch.tensor(0.2), torch.tensor(0.5)), [ExpTransform()])
x = torch.tensor([0.5, 1.0, 2.0])
print(ln1.log_prob(x), ln2.log_prob(x))
print(ln1.mean, ln1.variance)
normal = Normal(torch.zeros(3, 2), torch.ones(3, 2))
diagn = Independent(normal, 1)
print(diagn.batch_shape, diagn.event_shape, diagn.log_prob(torch.ones(3, 2)))
logits = torch.tensor([0.3, -1.0, 2.0], requires_grad=True)
bern = Bernoulli(logits=logits)
target = torch.tensor([1.0, 0.0, 1.0])
print(bern.probs, bern.log_prob(target), bern.entropy())
bern.log_prob(target).sum().backward()
print(logits.grad)
conc = torch.tensor([2.0, 3.0], requires_grad=True)
beta = Beta(conc[0], conc[1])
print(beta.log_prob(torch.tensor(0.3)), beta.mean, beta.entropy())
beta.log_prob(torch.tensor(0.3)).backward()
print(conc.grad)
g = Gamma(torch.tensor([2.0, 0.5]), torch.tensor([1.0, 3.0]))
print(g.log_prob(torch.tensor([1.5, 0.2])), g.mean)
d = Dirichlet(torch.tensor([1.0, 2.0, 3.0]))
print(d.log_prob(torch.tensor([0.2, 0.3, 0.5])), d.mean)
print(Uniform(-1.0, 3.0).log_prob(torch.tensor([0.0, 2.0])), Uniform(-1.0, 3.0).entropy())
