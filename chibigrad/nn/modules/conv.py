"""Conv1d and Conv2d: a small weight slid over the input (the op itself: chibigrad/ops/conv.py)."""
import math

from ... import creation
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module


class _ConvNd(Module):
    """Weight (out_channels, in_channels / groups, *kernel_size), initialised as nn.Linear is
    (``kaiming_uniform_(a=sqrt(5))``, bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in))), so that a
    convolution is a Linear layer applied to every patch."""
    spatial = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode != "zeros":
            raise NotImplementedError(f"chibigrad's convolutions pad with zeros only, not padding_mode={padding_mode!r}")
        n = self.spatial
        self.in_channels, self.out_channels, self.groups, self.padding_mode = in_channels, out_channels, groups, "zeros"
        self.kernel_size, self.stride, self.dilation = F._tuple(kernel_size, n), F._tuple(stride, n), F._tuple(dilation, n)
        self.padding = padding if isinstance(padding, str) else F._tuple(padding, n)
        self.weight = Parameter(creation.empty(out_channels, in_channels // groups, *self.kernel_size, dtype=dtype))
        self.register_parameter("bias", Parameter(creation.empty(out_channels, dtype=dtype)) if bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        convolve = F.conv1d if self.spatial == 1 else F.conv2d
        return convolve(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self.spatial:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * self.spatial:
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text


class Conv1d(_ConvNd):
    spatial = 1


class Conv2d(_ConvNd):
    spatial = 2
