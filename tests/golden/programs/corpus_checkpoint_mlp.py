# Follows the torch.utils.checkpoint docs and memory-saving tutorials: checkpoint a block of an MLP
# (use_reentrant=False, as the docs now recommend), checkpoint_sequential over nn.Sequential, and check
# the gradients equal those without checkpointing.
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


def make_model():
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.linspace(-0.6, 0.6, p.numel()).reshape(p.shape) * (1 + i % 2))
    return model


x = torch.tensor([[1.0, 2.0, -1.0], [0.5, 0.0, 1.5]])
plain = make_model()
plain(x).sum().backward()


class CheckpointedModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = make_model()

    def block(self, h):
        return self.net[3](self.net[2](h))

    def forward(self, x):
        h = self.net[1](self.net[0](x))
        h = checkpoint(self.block, h, use_reentrant=False)
        return self.net[4](h)


ckpt = CheckpointedModel()
out = ckpt(x)
out.sum().backward()
print(out.detach(), out.requires_grad)
for (name, p1), p2 in zip(plain.named_parameters(), ckpt.net.parameters()):
    print(name, torch.allclose(p1.grad, p2.grad), p2.grad.shape)

seq = make_model()
x2 = x.clone().requires_grad_()
out2 = checkpoint_sequential(seq, 2, x2, use_reentrant=False)
out2.sum().backward()
print(torch.allclose(out2, plain(x)), torch.allclose(seq[0].weight.grad, plain[0].weight.grad))
print(x2.grad)

# a function with several inputs and a non-tensor argument
def scaled_sum(a, b, scale):
    return (a * b).sum(dim=1) * scale


a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
b = torch.tensor([[0.5, -1.0], [2.0, 0.0]], requires_grad=True)
r = checkpoint(scaled_sum, a, b, 3.0, use_reentrant=False)
r.sum().backward()
print(r.detach(), a.grad, b.grad)
