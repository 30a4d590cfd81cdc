"""torch.utils.data: datasets and the DataLoader that batches them.

A Dataset is anything with ``__getitem__`` and ``__len__``. The DataLoader
picks indices (in order, or shuffled), fetches those samples and stacks
them into batch tensors with ``default_collate``. (Single process only:
PyTorch's ``num_workers`` parallelism is not implemented.)
"""
import numpy as np

from .. import creation
from .._dtype import float64
from ..creation import tensor
from ..ops import stack
from ..tensor import Tensor


class Dataset:
    """Base class for map-style datasets: subclass it and define ``__getitem__`` and ``__len__``."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")


class TensorDataset(Dataset):
    """Sample ``i`` is ``(t[i] for t in tensors)``: inputs and targets side by side."""

    def __init__(self, *tensors):
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


def default_collate(batch):
    """Stack a list of samples into one batch, keeping the samples' structure.

    Tensors are stacked along a new dim 0; numbers become a tensor (int64 or
    float64, as PyTorch); tuples, lists and dicts are collated field by field,
    so ``(x, y)`` samples give an ``[xs, ys]`` batch (a list, as in PyTorch).
    """
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(list(batch))
    if isinstance(first, np.ndarray):
        return tensor(np.stack(batch))
    if isinstance(first, (bool, int, float)):
        return tensor(batch, dtype=float64 if isinstance(first, float) else None)
    if isinstance(first, dict):
        return {key: default_collate([sample[key] for sample in batch]) for key in first}
    if isinstance(first, (tuple, list)):
        fields = [default_collate(list(samples)) for samples in zip(*batch)]
        return type(first)(*fields) if hasattr(first, "_fields") else fields  # a namedtuple stays one
    return batch


class DataLoader:
    """Iterate over ``dataset`` in batches of ``batch_size``.

    ``shuffle=True`` draws a new order every epoch from chibigrad's global
    generator (or ``generator``, a numpy Generator), so ``manual_seed``
    makes the order repeatable. ``drop_last`` skips a final short batch.
    """

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, generator=None, collate_fn=None):
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, shuffle
        self.drop_last, self.generator = drop_last, generator
        self.collate_fn = collate_fn or default_collate

    def _order(self):
        n = len(self.dataset)
        if not self.shuffle:
            return range(n)
        return (self.generator or creation._generator[0]).permutation(n).tolist()

    def __iter__(self):
        order = self._order()
        stop = len(self) * self.batch_size
        for start in range(0, stop, self.batch_size):
            indices = order[start:start + self.batch_size]
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        """The number of batches."""
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
