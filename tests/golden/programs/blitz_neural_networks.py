# PyTorch's 60-minute blitz, "Neural Networks" (LeNet): the network, its parameters, backward with a
# random gradient, the loss's grad_fn chain, conv1.bias.grad before and after, an SGD step. Fixed data
# (sines) instead of torch.randn, and fixed weights, so that chibigrad and PyTorch see the same numbers.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Net(nn.Module):

    def __init__(self):
        super(Net, self).__init__()
        # 1 input image channel, 6 output channels, 5x5 square convolution kernel
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        # an affine operation: y = Wx + b
        self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5*5 from image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, input):
        c1 = F.relu(self.conv1(input))
        s2 = F.max_pool2d(c1, (2, 2))
        c3 = F.relu(self.conv2(s2))
        s4 = F.max_pool2d(c3, 2)
        s4 = torch.flatten(s4, 1)
        f5 = F.relu(self.fc1(s4))
        f6 = F.relu(self.fc2(f5))
        output = self.fc3(f6)
        return output


def fixed(*shape, phase=0.0, scale=1.0):
    n = 1
    for s in shape:
        n *= s
    return (torch.sin(torch.arange(n, dtype=torch.float64) * 0.7 + phase) * scale).float().reshape(shape)


net = Net()
print(net)
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        fan_in = p[0].numel() if p.ndim > 1 else 10
        p.copy_(fixed(*p.shape, phase=i, scale=1.0 / fan_in ** 0.5))
params = list(net.parameters())
print(len(params))
print(params[0].size())  # conv1's .weight

input = fixed(1, 1, 32, 32, phase=0.3)
out = net(input)
print(out)

net.zero_grad()
out.backward(fixed(1, 10, phase=2.0))

output = net(input)
target = fixed(10, phase=1.0)  # a dummy target, for example
target = target.view(1, -1)  # make it the same shape as output
criterion = nn.MSELoss()

loss = criterion(output, target)
print(loss)
print(loss.grad_fn)  # MSELoss
print(loss.grad_fn.next_functions[0][0])  # Linear
print(loss.grad_fn.next_functions[0][0].next_functions[0][0])  # ReLU

net.zero_grad()  # zeroes the gradient buffers of all parameters
print('conv1.bias.grad before backward')
print(net.conv1.bias.grad)
loss.backward()
print('conv1.bias.grad after backward')
# a sum over 28 x 28 positions: float32 rounding depends on the order of the additions, so 3 digits
print([f"{g:.3g}" for g in net.conv1.bias.grad.tolist()])
print([[f"{g:.3g}" for g in row] for row in net.conv2.weight.grad[0, 0].tolist()])

optimizer = optim.SGD(net.parameters(), lr=0.01)
for step in range(3):
    optimizer.zero_grad()  # zero the gradient buffers
    output = net(input)
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()  # Does the update
    print(step, f"{loss.item():.6f}")
