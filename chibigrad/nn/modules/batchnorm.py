"""BatchNorm1d and BatchNorm2d: normalise each feature (channel) over the batch, remember running averages for eval."""
from ... import creation, int64
from .. import functional as F
from ..parameter import Parameter
from .module import Module


class BatchNorm1d(Module):
    """Per-feature ``(x - mean) / sqrt(var + eps) * weight + bias`` for (N, C) or (N, C, L) input.

    Training uses the batch's statistics and updates ``running_mean`` and
    ``running_var`` (buffers: saved in ``state_dict``, never trained); eval
    uses the running ones, so a single sample gives a deterministic answer.
    ``momentum=None`` averages all batches seen equally instead.
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.register_parameter("weight", None)
        self.register_parameter("bias", None)
        if affine:
            self.weight = Parameter(creation.ones(num_features, dtype=dtype))
            if bias:
                self.bias = Parameter(creation.zeros(num_features, dtype=dtype))
        stats = track_running_stats
        self.register_buffer("running_mean", creation.zeros(num_features, dtype=dtype) if stats else None)
        self.register_buffer("running_var", creation.ones(num_features, dtype=dtype) if stats else None)
        self.register_buffer("num_batches_tracked", creation.tensor(0, dtype=int64) if stats else None)

    def _check_input_dim(self, input):
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked._array += 1
            self.num_batches_tracked._bump_version()
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / self.num_batches_tracked.item()
        use_batch_stats = self.training or self.running_mean is None
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None, self.running_var if track else None,
                            self.weight, self.bias, use_batch_stats, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm2d(BatchNorm1d):
    """Per-channel normalisation of (N, C, H, W) input: statistics over the batch and both spatial dims."""

    def _check_input_dim(self, input):
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")
