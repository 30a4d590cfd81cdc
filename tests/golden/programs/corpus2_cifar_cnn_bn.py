# A small CNN with Conv2d, BatchNorm2d, MaxPool2d and Dropout trained a few steps, after the PyTorch CIFAR-10
# tutorial (https://pytorch.org/tutorials/beginner/blitz/cifar10_tutorial.html) extended with batch norm as in
# d2l's "Batch Normalization" chapter (nn.Conv2d -> nn.BatchNorm2d -> nn.ReLU -> nn.MaxPool2d). Fixed images, labels.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3)
        self.bn1 = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(4, 6, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(6)
        self.dropout = nn.Dropout(0.25)
        self.fc1 = nn.Linear(6 * 2 * 2, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = self.pool(F.relu(self.bn2(self.conv2(x))))
        x = torch.flatten(x, 1)
        x = self.dropout(x)
        return self.fc1(x)


net = Net()
with torch.no_grad():
    for i, (name, p) in enumerate(net.named_parameters()):
        if 'bn' not in name:
            p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.4)
print(net)
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
inputs = torch.sin(torch.arange(4 * 3 * 10 * 10) * 0.13).reshape(4, 3, 10, 10)
labels = torch.tensor([3, 1, 7, 0])
net.eval()
print(net(inputs).shape)
net.dropout.p = 0.0
net.train()
running_loss = 0.0
for i in range(4):
    optimizer.zero_grad()
    outputs = net(inputs)
    loss = criterion(outputs, labels)
    loss.backward()
    optimizer.step()
    running_loss += loss.item()
    print(f'[{i + 1}] loss: {loss.item():.4f}')
print(net.bn1.running_mean)
print(net.bn1.running_var)
print(net.bn2.num_batches_tracked)
net.eval()
with torch.no_grad():
    outputs = net(inputs)
    _, predicted = torch.max(outputs, 1)
print(predicted, (predicted == labels).sum().item())
print(net.conv1.weight.grad.shape, net.bn1.weight.grad)
