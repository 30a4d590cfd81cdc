# Follows the nn.Module tutorial material: a Module subclass with Dropout and BatchNorm1d, printing
# named_parameters, named_modules, state_dict keys (buffers included), parameter counts, and showing
# what model.train() / model.eval() change (dropout is the identity in eval; BatchNorm uses running
# statistics). Dropout's random mask is only printed where it is deterministic (p=0 and p=1).
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.dropout = nn.Dropout(p=0.5)
        self.fc2 = nn.Linear(4, 1)

    def forward(self, x):
        x = torch.relu(self.bn(self.fc1(x)))
        x = self.dropout(x)
        return self.fc2(x)


net = Net()
with torch.no_grad():
    for name, p in net.named_parameters():
        p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape))
print(net)
for name, param in net.named_parameters():
    print(name, tuple(param.shape), param.requires_grad)
print([name for name, _ in net.named_modules()])
print(list(net.state_dict().keys()))
print(sum(p.numel() for p in net.parameters() if p.requires_grad))
print(net.training, net.dropout.training)

x = torch.tensor([[1.0, 2.0, 3.0], [0.0, -1.0, 1.0], [2.0, 0.5, -1.0], [1.0, 1.0, 1.0]])
net.eval()
print(net.training, net.bn.training)
with torch.no_grad():
    out_eval = net(x)
print(out_eval)
print(net.bn.running_mean, net.bn.running_var, net.bn.num_batches_tracked)

net.train()
net.dropout.p = 0.0  # deterministic: dropout with p=0 keeps everything
out_train = net(x)
print(out_train)
print(net.bn.running_mean, net.bn.running_var, net.bn.num_batches_tracked)
(out_train * torch.tensor([[1.0], [-2.0], [3.0], [0.5]])).sum().backward()
print(net.fc1.weight.grad)

drop = nn.Dropout(p=1.0)
print(drop(torch.ones(2, 3)), drop.eval()(torch.ones(2, 3)))
print(nn.functional.dropout(torch.ones(3), p=0.5, training=False))
try:
    nn.Dropout(p=1.5)
except ValueError as e:
    print("ValueError:", e)

# eval mode does not turn off autograd: no_grad does
net.eval()
y = net(x)
print(y.requires_grad, y.grad_fn.name())
with torch.no_grad():
    print(net(x).requires_grad)
print(net.state_dict()['bn.num_batches_tracked'])
