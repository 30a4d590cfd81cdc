# requires: nn.Flatten, nn.Unflatten
# nn.Flatten and nn.Unflatten as PyTorch's docs and CNN tutorials use them: reprs, shapes, the
# ViewBackward0 node, gradients through them, and the errors for bad dims and sizes.
import torch
import torch.nn as nn
from golden_helpers import attempt, graph

# The docs' examples (with fixed data instead of torch.randn)
input = torch.arange(32 * 1 * 5 * 5, dtype=torch.float32).reshape(32, 1, 5, 5)
m = nn.Flatten()
output = m(input)
print(m, output.size())
m = nn.Flatten(0, 2)
print(m, m(input).size())
input = torch.ones(2, 50)
m = nn.Sequential(nn.Linear(50, 50), nn.Unflatten(1, (2, 5, 5)))
print(m)
print(m(input).size())
m = nn.Unflatten(1, torch.Size([2, 5, 5]))
print(m, m(input).size())
print(nn.Unflatten(-1, [5, 10]), nn.Unflatten(1, (-1, 5))(input).shape)
print(nn.Flatten().start_dim, nn.Flatten().end_dim, nn.Unflatten(1, (2, 25)).dim, nn.Unflatten(1, (2, 25)).unflattened_size)

# A tiny CNN-style head: feature maps flattened into a linear layer, and back
x = torch.tensor([[[[0.5, -1.0], [2.0, 0.25]]], [[[1.5, 0.0], [-0.5, 1.0]]]], requires_grad=True)
flat = nn.Flatten()(x)
print(flat, flat.grad_fn.name() if hasattr(flat.grad_fn, "name") else type(flat.grad_fn).__name__)
head = nn.Linear(4, 3)
with torch.no_grad():
    head.weight.copy_(torch.tensor([[0.1, -0.2, 0.3, 0.0], [0.5, 0.5, -0.5, 0.25], [-1.0, 0.0, 0.2, 0.4]]))
    head.bias.copy_(torch.tensor([0.0, 0.1, -0.1]))
out = nn.Unflatten(1, (3, 1))(head(flat))
print(out.shape, graph(out.grad_fn, 4))
(out ** 2).sum().backward()
print(x.grad)
print(nn.Flatten(0)(torch.tensor(3.0)).shape, nn.Flatten()(torch.ones(2, 3)).shape, nn.Flatten(-2)(torch.ones(2, 3, 4)).shape)

attempt("unflatten sizes", lambda: nn.Unflatten(1, (2, 2))(torch.ones(2, 3)))
attempt("unflatten int size", lambda: nn.Unflatten(1, 3))
attempt("unflatten float size", lambda: nn.Unflatten(1, [2.0, 1]))
attempt("flatten dim", lambda: nn.Flatten(3)(torch.ones(2, 3)))
attempt("flatten order", lambda: nn.Flatten(1, 0)(torch.ones(2, 3)))
attempt("flatten 1-d", lambda: nn.Flatten()(torch.ones(3)))
