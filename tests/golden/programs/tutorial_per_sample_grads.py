# requires: func.vmap
# PyTorch's tutorial "Per-sample-gradients" (torch.func), transcribed with fixed data instead of torch.randn
# and random labels, and with an MLP in place of its CNN (chibigrad has no convolutions).
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap


class SimpleMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def loss_fn(predictions, targets):
    return F.nll_loss(predictions, targets)


def fixed(*shape, phase=0.0):
    n = 1
    for s in shape:
        n *= s
    return (torch.arange(n, dtype=torch.float64) * 0.37 + phase).sin().float().reshape(shape)


batch_size = 8
data = fixed(batch_size, 1, 28, 28)
targets = torch.arange(batch_size) % 10

model = SimpleMLP()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(fixed(*p.shape, phase=i) * 0.05)

predictions = model(data)
loss = loss_fn(predictions, targets)
print(round(loss.item(), 4))


def compute_grad(sample, target):
    sample = sample.unsqueeze(0)  # prepend batch dimension for processing
    target = target.unsqueeze(0)
    prediction = model(sample)
    loss = loss_fn(prediction, target)
    return torch.autograd.grad(loss, list(model.parameters()))


def compute_sample_grads(data, targets):
    """manually process each sample with per sample gradient"""
    sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
    sample_grads = zip(*sample_grads)
    sample_grads = [torch.stack(shards) for shards in sample_grads]
    return sample_grads


per_sample_grads = compute_sample_grads(data, targets)
print(per_sample_grads[1].shape)

params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    targets = target.unsqueeze(0)
    predictions = functional_call(model, (params, buffers), (batch,))
    loss = loss_fn(predictions, targets)
    return loss


ft_compute_grad = grad(compute_loss)
ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
for name, g in ft_per_sample_grads.items():
    print(name, g.shape, g.abs().sum(dim=tuple(range(1, g.ndim)))[:4].round(decimals=3))
for per_sample_grad, ft_per_sample_grad in zip(per_sample_grads, ft_per_sample_grads.values()):
    assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
print("per-sample gradients match the loop")
