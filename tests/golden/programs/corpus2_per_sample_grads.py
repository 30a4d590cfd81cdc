# Per-sample gradients with torch.func, after PyTorch's "Per-sample-gradients" tutorial
# (https://pytorch.org/tutorials/intermediate/per_sample_grads.html): params = {k: v.detach() for k, v in model.named_parameters()};
# compute_loss(params, buffers, sample, target) with functional_call(model, (params, buffers), (batch,));
# ft_compute_grad = grad(compute_loss); ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0));
# compared with the naive loop of compute_grad(sample, target) using torch.autograd.grad. Small MLP instead of the CNN.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, vmap, grad


class SimpleMLP(nn.Module):
    def __init__(self):
        super(SimpleMLP, self).__init__()
        self.fc1 = nn.Linear(5, 6)
        self.fc2 = nn.Linear(6, 3)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def loss_fn(predictions, targets):
    return F.nll_loss(predictions, targets)


model = SimpleMLP()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.5)
batch_size = 4
data = torch.sin(torch.arange(batch_size * 5) * 0.33).reshape(batch_size, 5)
targets = torch.tensor([0, 2, 1, 2])


def compute_grad(sample, target):
    sample = sample.unsqueeze(0)
    target = target.unsqueeze(0)
    prediction = model(sample)
    loss = loss_fn(prediction, target)
    return torch.autograd.grad(loss, list(model.parameters()))


def compute_sample_grads(data, targets):
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
for per_sample_grad, ft_per_sample_grad in zip(per_sample_grads, ft_per_sample_grads.values()):
    assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
print(list(ft_per_sample_grads.keys()))
print(ft_per_sample_grads['fc2.bias'])
