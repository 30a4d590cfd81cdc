"""Distribution: the base class, with PyTorch's shapes, argument checks and messages.

A distribution holds a *batch* of independent distributions (``batch_shape``), each over
values of ``event_shape``. ``sample`` draws without a graph; ``rsample`` (the
reparameterisation trick: a fixed random number transformed by the parameters) draws with
one, so a loss on the sample can be differentiated with respect to the parameters.
"""
from .. import _dtype
from ..autograd.grad_mode import no_grad


class Distribution:
    has_rsample = False
    _validate_args = True  # PyTorch's default (__debug__)
    arg_constraints = {}

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape, self._event_shape = _dtype.Size(batch_shape), _dtype.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if param not in self.__dict__:
                    continue  # probs given: logits are computed, not checked (and the other way round)
                value = getattr(self, param)
                if not constraint.check(value).all():
                    raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape "
                                     f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                                     f"{constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """A sample of shape ``sample_shape + batch_shape + event_shape``, outside any graph."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} has no rsample: its samples cannot carry gradients")

    def _extended_shape(self, sample_shape=()):
        return _dtype.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        expected = tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(value.shape), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {value.shape} vs "
                                 f"{_dtype.Size(expected)}.")
        if not self.support.check(value).all():
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({self.support!r}) of the distribution {self!r}, but found "
                             f"invalid values:\n{value}")

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        shown = [f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
                 for p in names]
        return f"{type(self).__name__}({', '.join(shown)})"
