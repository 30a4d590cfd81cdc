"""Bernoulli(probs or logits): 1 with probability p, else 0."""
from ..autograd.grad_mode import no_grad
from ..creation import rand
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from ._util import broadcast_all, logits_to_probs, probs_to_logits
from .distribution import Distribution


class Bernoulli(Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        super().__init__((probs if probs is not None else logits).shape, validate_args=validate_args)

    def __getattr__(self, name):
        """The parameter not given is computed from the other when first asked for (PyTorch's lazy_property)."""
        if name == "probs" and "logits" in self.__dict__:
            self.probs = logits_to_probs(self.logits, is_binary=True)
            return self.probs
        if name == "logits" and "probs" in self.__dict__:
            self.logits = probs_to_logits(self.probs, is_binary=True)
            return self.logits
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def mean(self):
        return self.probs

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return (rand(*shape, dtype=self.probs.dtype) < self.probs.expand(shape)).to(self.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
