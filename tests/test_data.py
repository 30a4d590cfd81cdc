"""chibigrad.utils.data: datasets, batching, shuffling with a seed, and the seeds' loader loops."""
import numpy as np
import pytest

import chibigrad as torch
from chibigrad.utils.data import DataLoader, Dataset, TensorDataset, default_collate


def make_dataset(n=10):
    return TensorDataset(torch.arange(n * 2, dtype=torch.float32).reshape(n, 2), torch.arange(n))


def test_tensor_dataset_indexing_and_length():
    ds = make_dataset()
    x, y = ds[3]
    assert x.tolist() == [6.0, 7.0] and y.item() == 3 and len(ds) == 10
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(torch.zeros(3, 2), torch.zeros(4))


@pytest.mark.parametrize("drop_last, sizes", [(False, [4, 4, 2]), (True, [4, 4])])
def test_batches_in_order(drop_last, sizes):
    loader = DataLoader(make_dataset(), batch_size=4, drop_last=drop_last)
    assert len(loader) == len(sizes)
    batches = list(loader)
    assert [len(y) for _, y in batches] == sizes
    x, y = batches[0]
    assert x.shape == torch.Size([4, 2]) and x.dtype is torch.float32 and y.dtype is torch.int64
    assert y.tolist() == [0, 1, 2, 3] and x[1].tolist() == [2.0, 3.0]


def test_default_batch_size_is_one():
    x, y = next(iter(DataLoader(make_dataset())))
    assert x.shape == torch.Size([1, 2]) and y.tolist() == [0]


def test_shuffle_is_a_permutation_repeatable_with_manual_seed():
    loader = DataLoader(make_dataset(), batch_size=3, shuffle=True)
    torch.manual_seed(7)
    first = [i for _, y in loader for i in y.tolist()]
    second = [i for _, y in loader for i in y.tolist()]
    torch.manual_seed(7)
    again = [i for _, y in loader for i in y.tolist()]
    assert sorted(first) == list(range(10))
    assert first == again and first != second  # a new order every epoch, the same after reseeding
    assert first != list(range(10))


def test_shuffle_with_its_own_generator():
    orders = [[i for _, y in DataLoader(make_dataset(), batch_size=5, shuffle=True,
                                        generator=np.random.default_rng(3)) for i in y.tolist()] for _ in range(2)]
    assert orders[0] == orders[1]


def test_collate_keeps_structure():
    assert default_collate([1, 2]).dtype is torch.int64
    assert default_collate([1.5, 2.0]).dtype is torch.float64
    batch = default_collate([{"a": torch.ones(2), "b": 1}, {"a": torch.zeros(2), "b": 2}])
    assert batch["a"].shape == torch.Size([2, 2]) and batch["b"].tolist() == [1, 2]
    assert isinstance(default_collate([(torch.ones(1), 0), (torch.ones(1), 1)]), list)


class Squares(Dataset):
    """A custom map-style dataset, as the DataLoader chapter writes one."""

    def __len__(self):
        return 5

    def __getitem__(self, i):
        return torch.tensor([float(i)]), torch.tensor(float(i * i))


def test_custom_dataset_and_collate_fn():
    xs, ys = zip(*DataLoader(Squares(), batch_size=2))
    assert [y.tolist() for y in ys] == [[0.0, 1.0], [4.0, 9.0], [16.0]]
    loader = DataLoader(Squares(), batch_size=5, collate_fn=lambda samples: len(samples))
    assert list(loader) == [5]


def test_seed_training_loop_over_a_loader():
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    criterion = torch.nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    data = torch.randn(64, 2)
    target = data @ torch.tensor([[2.0], [-1.0]]) + 0.5
    dataloader = DataLoader(TensorDataset(data, target), batch_size=16, shuffle=True)
    epoch_losses = []
    for epoch in range(20):
        total = 0.0
        for data_batch, target_batch in dataloader:
            optimizer.zero_grad()
            loss = criterion(model(data_batch), target_batch)
            loss.backward()
            optimizer.step()
            total += loss.item()
        epoch_losses.append(total)
    assert epoch_losses[-1] < 0.05 * epoch_losses[0]
