"""Linear layers: ``y = x @ W.T + b`` and the do-nothing Identity."""
import math

from ... import creation
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module


class Identity(Module):
    """Returns its input: a placeholder where a layer is optional."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape (out_features, in_features).

    Initialised as PyTorch does: every weight and bias uniform in
    ``[-1/sqrt(in_features), 1/sqrt(in_features)]`` (that is what
    ``kaiming_uniform_(a=sqrt(5))`` works out to), drawn from chibigrad's
    global generator so ``manual_seed`` makes models repeatable.
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(creation.empty(out_features, in_features, dtype=dtype))
        if bias:
            self.bias = Parameter(creation.empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
