# Follows the "Datasets & DataLoaders" tutorial and typical training loops over them: a custom Dataset
# with __len__/__getitem__, TensorDataset, DataLoader(batch_size, shuffle=False, drop_last), iterating
# with enumerate, and the running-loss print every few batches.
import torch
from torch.utils.data import DataLoader, Dataset, TensorDataset


class SquaresDataset(Dataset):
    def __init__(self, n):
        self.x = torch.arange(n, dtype=torch.float32).unsqueeze(1) / n
        self.y = self.x ** 2

    def __len__(self):
        return len(self.x)

    def __getitem__(self, idx):
        return self.x[idx], self.y[idx]


ds = SquaresDataset(10)
print(len(ds), ds[3])
loader = DataLoader(ds, batch_size=4)
print(len(loader))
for xb, yb in loader:
    print(xb.shape, yb.squeeze(1))
loader = DataLoader(ds, batch_size=4, drop_last=True)
print(len(loader), [xb.shape[0] for xb, _ in loader])

features = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 1.0], [1.0, 2.0], [0.5, 0.5], [2.0, 2.0],
                         [0.0, 0.0]])
targets = torch.tensor([1.0, -1.0, 0.0, 1.0, -1.0, 0.0, 0.0, 0.0]).unsqueeze(1)
train_ds = TensorDataset(features, targets)
print(train_ds[0], len(train_ds), train_ds.tensors[0].shape)
train_dl = DataLoader(train_ds, batch_size=2, shuffle=False)

model = torch.nn.Linear(2, 1, bias=False)
with torch.no_grad():
    model.weight.copy_(torch.tensor([[0.1, 0.1]]))
opt = torch.optim.SGD(model.parameters(), lr=0.25)
loss_fn = torch.nn.MSELoss()
for epoch in range(3):
    running_loss = 0.0
    for i, data in enumerate(train_dl, 0):
        inputs, labels = data
        opt.zero_grad()
        outputs = model(inputs)
        loss = loss_fn(outputs, labels)
        loss.backward()
        opt.step()
        running_loss += loss.item()
        if i % 2 == 1:
            print(f'[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 2:.3f}')
            running_loss = 0.0
print('Finished Training', model.weight)

# batches of dicts and of tuples with ints, through the default collate
pairs = [(torch.tensor([float(i), float(i + 1)]), i % 2) for i in range(5)]
for xb, yb in DataLoader(pairs, batch_size=2):
    print(xb, yb, yb.dtype)
records = [{"x": torch.tensor([float(i)]), "label": i} for i in range(3)]
print(next(iter(DataLoader(records, batch_size=3))))
