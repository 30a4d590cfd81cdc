# From raw tensors to nn.Module, after PyTorch's "What is torch.nn really?" (https://pytorch.org/tutorials/beginner/nn_tutorial.html):
# weights = torch.randn(784, 10) / math.sqrt(784); weights.requires_grad_(); log_softmax(x) = x - x.exp().sum(-1).log().unsqueeze(-1);
# nll(input, target) = -input[range(target.shape[0]), target].mean(); accuracy; the manual loop with weights -= weights.grad * lr;
# then Mnist_Logistic(nn.Module) with nn.Parameter, F.cross_entropy, TensorDataset + DataLoader, optim.SGD, and fit() with
# loss_batch and np.sum(np.multiply(losses, nums)) / np.sum(nums). 12 features instead of 784; fixed data and weights.
import math
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.utils.data import DataLoader, TensorDataset

n, d, c = 20, 12, 4
x_train = torch.sin(torch.arange(n * d) * 0.3).reshape(n, d)
y_train = (torch.arange(n) * 3) % c
x_valid, y_valid = x_train[:8] * 0.9, y_train[:8]
weights = torch.cos(torch.arange(d * c) * 0.5).reshape(d, c) / math.sqrt(d)
weights.requires_grad_()
bias = torch.zeros(c, requires_grad=True)


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def model(xb):
    return log_softmax(xb @ weights + bias)


bs = 8
xb = x_train[0:bs]
preds = model(xb)
print(preds[0], preds.shape)


def nll(input, target):
    return -input[range(target.shape[0]), target].mean()


loss_func = nll
yb = y_train[0:bs]
print(loss_func(preds, yb))


def accuracy(out, yb):
    preds = torch.argmax(out, dim=1)
    return (preds == yb).float().mean()


print(accuracy(preds, yb))
lr = 0.5
epochs = 2
for epoch in range(epochs):
    for i in range((n - 1) // bs + 1):
        start_i = i * bs
        end_i = start_i + bs
        xb = x_train[start_i:end_i]
        yb = y_train[start_i:end_i]
        pred = model(xb)
        loss = loss_func(pred, yb)
        loss.backward()
        with torch.no_grad():
            weights -= weights.grad * lr
            bias -= bias.grad * lr
            weights.grad.zero_()
            bias.grad.zero_()
print(loss_func(model(xb), yb), accuracy(model(xb), yb))


class Mnist_Logistic(nn.Module):
    def __init__(self):
        super().__init__()
        self.weights = nn.Parameter(torch.cos(torch.arange(d * c) * 0.5).reshape(d, c) / math.sqrt(d))
        self.bias = nn.Parameter(torch.zeros(c))

    def forward(self, xb):
        return xb @ self.weights + self.bias


def loss_batch(model, loss_func, xb, yb, opt=None):
    loss = loss_func(model(xb), yb)
    if opt is not None:
        loss.backward()
        opt.step()
        opt.zero_grad()
    return loss.item(), len(xb)


def fit(epochs, model, loss_func, opt, train_dl, valid_dl):
    for epoch in range(epochs):
        model.train()
        for xb, yb in train_dl:
            loss_batch(model, loss_func, xb, yb, opt)
        model.eval()
        with torch.no_grad():
            losses, nums = zip(*[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl])
        val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)
        print(epoch, f"{val_loss:.5f}")


train_ds = TensorDataset(x_train, y_train)
valid_ds = TensorDataset(x_valid, y_valid)
train_dl = DataLoader(train_ds, batch_size=bs)
valid_dl = DataLoader(valid_ds, batch_size=bs * 2)
model = Mnist_Logistic()
opt = optim.SGD(model.parameters(), lr=lr)
fit(2, model, F.cross_entropy, opt, train_dl, valid_dl)
print(model.bias)
