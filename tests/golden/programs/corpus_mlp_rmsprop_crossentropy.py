# Follows the PyTorch "Build the Neural Network" / "Optimizing Model Parameters" tutorials: a
# NeuralNetwork(nn.Module) with nn.Flatten and a linear_relu_stack, CrossEntropyLoss, train_loop and
# test_loop functions printing "loss: ... [current/size]" and "Accuracy". Fixed tiny "images" (3x3).
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

images = torch.stack([torch.arange(9.0).reshape(3, 3) / 8 * (i % 3) - (i % 2) * 0.5 for i in range(12)])
labels = torch.tensor([i % 3 for i in range(12)])
train_dataloader = DataLoader(TensorDataset(images[:9], labels[:9]), batch_size=3)
test_dataloader = DataLoader(TensorDataset(images[9:], labels[9:]), batch_size=3)


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(9, 5),
            nn.ReLU(),
            nn.Linear(5, 3),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = NeuralNetwork()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (1 if i % 2 == 0 else 0.1) * (-1) ** i)
print(model)
for name, param in model.named_parameters():
    print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \n")


def train_loop(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if batch % 2 == 0:
            loss, current = loss.item(), batch * 3 + len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test_loop(dataloader, model, loss_fn):
    model.eval()
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")


loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-2)
for t in range(4):
    print(f"Epoch {t+1}\n-------------------------------")
    train_loop(train_dataloader, model, loss_fn, optimizer)
    test_loop(test_dataloader, model, loss_fn)
print("Done!")
pred_probab = nn.Softmax(dim=1)(model(images[:2]))
print(pred_probab.argmax(1), pred_probab.grad_fn)
