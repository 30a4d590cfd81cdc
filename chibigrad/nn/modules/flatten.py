"""Flatten and Unflatten: the reshapes between convolution-like and linear layers."""
from ...ops.shape import unflatten
from .module import Module


class Flatten(Module):
    """Merge dims ``start_dim..end_dim`` into one; by default every dim but the batch dim (0)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size``, the inverse of Flatten (one size may be -1)."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        _check_sizes(unflattened_size)
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input):
        return unflatten(input, self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


def _check_sizes(sizes):
    """PyTorch's check: a tuple or list (torch.Size is a tuple) of ints."""
    if not isinstance(sizes, (tuple, list)):
        raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(sizes).__name__}")
    for i, size in enumerate(sizes):
        if not isinstance(size, int):
            raise TypeError(f"unflattened_size must be tuple of ints, but found element of type "
                            f"{type(size).__name__} at pos {i}")


