# torch.utils.checkpoint as the activation-checkpointing docs use it: both variants give the plain gradients;
# the non-reentrant one keeps the segment's own nodes, the reentrant one a single node.
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential
from golden_helpers import graph

lin1, lin2 = nn.Linear(3, 4), nn.Linear(4, 2)
with torch.no_grad():
    lin1.weight.copy_(torch.tensor([[0.1, -0.2, 0.3], [0.0, 0.5, -0.1], [0.2, 0.2, 0.2], [-0.3, 0.1, 0.0]]))
    lin1.bias.copy_(torch.tensor([0.01, -0.02, 0.03, 0.0]))
    lin2.weight.copy_(torch.tensor([[0.5, -0.5, 0.25, 0.1], [-0.2, 0.3, 0.0, 0.4]]))
    lin2.bias.copy_(torch.tensor([0.1, -0.1]))
block = nn.Sequential(lin1, nn.Tanh(), lin2)
x = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]], requires_grad=True)


def grads():
    return [t.grad.clone() for t in (x, lin1.weight, lin2.bias)]


def reset():
    for t in (x, lin1.weight, lin1.bias, lin2.weight, lin2.bias):
        t.grad = None


block(x).pow(2).sum().backward()
plain = grads()
for use_reentrant in (False, True):
    reset()
    out = checkpoint(block, x, use_reentrant=use_reentrant)
    print(use_reentrant, out, graph(out.grad_fn, max_depth=2))
    out.pow(2).sum().backward()
    print(all(torch.allclose(a, b) for a, b in zip(grads(), plain)))

reset()
data = torch.tensor([[0.5, -1.0, 2.0]])
out = checkpoint(block, data, use_reentrant=False)
out.sum().backward()
print("input without grad", out.grad_fn.name(), lin1.weight.grad.abs().sum() > 0)
reset()
out = checkpoint(lambda t, scale: block(t) * scale, x, use_reentrant=False, scale=2.0)
out.sum().backward()
print("keyword", out.grad_fn.name(), x.grad)
reset()
seq = checkpoint_sequential(nn.Sequential(lin1, nn.Tanh(), lin2, nn.ReLU()), 2, x, use_reentrant=False)
print("sequential", graph(seq.grad_fn, max_depth=3))
