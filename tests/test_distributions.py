"""torch.distributions: gradients of log_prob, entropy and kl_divergence by central differences in float64,
and what sampling must do. What they print is compared with PyTorch's in the golden program
``distributions_vae_and_policy``."""
import math

import numpy as np
import pytest

import chibigrad as torch
from chibigrad.autograd import gradcheck
from chibigrad.distributions import Bernoulli, Categorical, Normal, Uniform, kl_divergence

F64 = dict(dtype=torch.float64)


@pytest.mark.parametrize("function", [
    lambda loc, scale: Normal(loc, scale).log_prob(torch.tensor([0.3, -1.0], **F64)),
    lambda loc, scale: Normal(loc, scale).entropy(),
    lambda loc, scale: kl_divergence(Normal(loc, scale), Normal(scale, loc.exp())),
    lambda loc, scale: Categorical(logits=torch.stack([loc, scale])).log_prob(torch.tensor([1, 0])),
    lambda loc, scale: Categorical(logits=torch.stack([loc, scale])).entropy(),
    lambda loc, scale: kl_divergence(Categorical(logits=loc), Categorical(logits=scale)),
    lambda loc, scale: Bernoulli(logits=loc).log_prob(torch.tensor([1.0, 0.0], **F64)) + Bernoulli(probs=scale / 2).entropy(),
    lambda loc, scale: Uniform(loc - 3, scale + 1).log_prob(torch.tensor([0.0, 0.5], **F64)),
])
def test_gradients(function):
    loc = torch.tensor([0.2, -0.4], **F64, requires_grad=True)
    scale = torch.tensor([0.7, 1.3], **F64, requires_grad=True)
    assert gradcheck(function, (loc, scale))


def test_rsample_carries_gradients_and_sample_does_not():
    loc = torch.zeros(3, requires_grad=True)
    scale = torch.ones(3, requires_grad=True)
    z = Normal(loc, scale).rsample((5,))
    z.sum().backward()
    assert z.shape == (5, 3) and np.all(loc.grad.numpy() == 5)
    assert np.allclose(scale.grad.numpy(), ((z.detach() - loc.detach()) / scale.detach()).sum(0).numpy())
    assert not Normal(loc, scale).sample((2,)).requires_grad


def test_samples_follow_the_distribution():
    torch.manual_seed(0)
    draws = Categorical(probs=torch.tensor([0.2, 0.5, 0.3])).sample((20000,))
    assert np.allclose(np.bincount(draws.numpy(), minlength=3) / 20000, [0.2, 0.5, 0.3], atol=0.015)
    flips = Bernoulli(probs=torch.tensor([0.25])).sample((20000,))
    assert abs(flips.mean().item() - 0.25) < 0.015
    z = Normal(torch.tensor(2.0), torch.tensor(3.0)).sample((20000,))
    assert abs(z.mean().item() - 2) < 0.1 and abs(z.std().item() - 3) < 0.1


def test_missing_parts_say_so():
    with pytest.raises(AttributeError, match="chibigrad does not implement torch.distributions.MultivariateNormal"):
        torch.distributions.MultivariateNormal
    with pytest.raises(NotImplementedError, match="No KL"):
        kl_divergence(Normal(0.0, 1.0), Uniform(0.0, 1.0))


def test_normal_cdf_and_icdf_are_inverse_and_differentiable():
    loc = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    scale = torch.tensor([1.0, 2.5], dtype=torch.float64, requires_grad=True)
    value = torch.tensor([0.3, -1.0], dtype=torch.float64)
    m = Normal(loc, scale)
    expected = [0.5 * (1 + math.erf((v - mu) / (sd * math.sqrt(2))))
                for v, mu, sd in zip([0.3, -1.0], [0.0, 1.0], [1.0, 2.5])]
    np.testing.assert_allclose(m.cdf(value).detach().numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(m.icdf(m.cdf(value)).detach().numpy(), value.numpy(), rtol=1e-10)
    assert torch.autograd.gradcheck(lambda l, s: Normal(l, s).cdf(value), (loc, scale))
    assert torch.autograd.gradcheck(lambda l, s: Normal(l, s).icdf(torch.tensor([0.1, 0.7], dtype=torch.float64)),
                                    (loc, scale))
