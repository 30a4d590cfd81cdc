"""Categorical(probs or logits): one of K classes; the last dim of the parameters holds the K."""
import numpy as np

from .._dtype import int64
from ..creation import _generator, arange
from ..tensor import wrap
from . import constraints
from ._util import logits_to_probs, probs_to_logits
from .distribution import Distribution


class Categorical(Distribution):
    has_enumerate_support = True
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real}

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)  # normalised: log-probabilities
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        super().__init__(self._param.shape[:-1], validate_args=validate_args)

    def __getattr__(self, name):
        """The parameter not given is computed from the other when first asked for (PyTorch's lazy_property)."""
        if name == "probs" and "logits" in self.__dict__:
            self.probs = logits_to_probs(self.logits)
            return self.probs
        if name == "logits" and "probs" in self.__dict__:
            self.logits = probs_to_logits(self.probs)
            return self.logits
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self):
        return self._param.shape

    def sample(self, sample_shape=()):
        """Inverse-CDF sampling: the first class whose cumulative probability exceeds a uniform number."""
        u = _generator[0].random(tuple(self._extended_shape(sample_shape)) + (1,))
        first = (np.cumsum(self.probs._array, -1) <= u).sum(-1)
        return wrap(np.minimum(first, self._num_events - 1).astype(np.int64))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        shape = np.broadcast_shapes(tuple(value.shape), tuple(self.logits.shape))
        value, log_pmf = value.expand(shape), self.logits.expand(shape)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def enumerate_support(self, expand=True):
        """Every class, shaped to broadcast against the batch: (K, 1, ...) or expanded to (K, *batch_shape)."""
        values = arange(self._num_events, dtype=int64).view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

    def entropy(self):
        logits = self.logits.clamp(min=float(np.finfo(self.logits._array.dtype).min))
        return -(logits * self.probs).sum(-1)
