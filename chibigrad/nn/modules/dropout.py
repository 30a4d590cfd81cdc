"""Dropout and Dropout2d: random zeros while training, nothing at all in eval mode."""
from .. import functional as F
from .module import Module


class Dropout(Module):
    """Zero each element with probability ``p`` in training and scale the rest by 1/(1-p).

    ``model.eval()`` turns it into the identity: forgetting ``eval()`` before
    evaluating is a classic source of noisy validation numbers.
    """

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout2d(Dropout):
    """Zero whole channels of (N, C, H, W) input with probability ``p``."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)
