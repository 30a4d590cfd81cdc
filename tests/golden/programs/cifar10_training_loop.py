# PyTorch's "Training a Classifier" (CIFAR-10) tutorial: its Net, CrossEntropyLoss, SGD with momentum and
# the training loop's running loss, on a fixed batch of four 3x32x32 "images" (sines) for a few steps.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)  # flatten all dimensions except batch
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


def fixed(*shape, phase=0.0, scale=1.0):
    n = 1
    for s in shape:
        n *= s
    return (torch.sin(torch.arange(n, dtype=torch.float64) * 0.61 + phase) * scale).float().reshape(shape)


net = Net()
print(net)
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        fan_in = p[0].numel() if p.ndim > 1 else 20
        p.copy_(fixed(*p.shape, phase=i, scale=1.0 / fan_in ** 0.5))

criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
inputs = fixed(4, 3, 32, 32, phase=0.5)
labels = torch.tensor([3, 8, 8, 0])

running_loss = 0.0
for i in range(6):
    optimizer.zero_grad()
    outputs = net(inputs)
    loss = criterion(outputs, labels)
    loss.backward()
    optimizer.step()
    running_loss += loss.item()
    print(f'[1, {i + 1:5d}] loss: {loss.item():.4f} running: {running_loss / (i + 1):.4f}')

print(loss.grad_fn, loss.grad_fn.next_functions[0][0])
_, predicted = torch.max(net(inputs), 1)
print('Predicted: ', ' '.join(f'{int(predicted[j])}' for j in range(4)))
print(net.conv1.weight.grad.shape, net.pool(torch.ones(1, 1, 4, 4)).shape)
