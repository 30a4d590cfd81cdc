# requires: nn.Linear
# F.linear's graph for each input rank, with and without bias: the nodes, the edges, the gradients.
import torch
import torch.nn as nn
import torch.nn.functional as F


def walk(fn, depth=1):
    """One line per node, children indented, leaves named by their variable's shape."""
    if fn is None:
        print("  " * depth + "None")
        return
    leaf = f" {list(fn.variable.shape)}" if type(fn).__name__ == "AccumulateGrad" else ""
    print("  " * depth + type(fn).__name__ + leaf)
    for child, _ in fn.next_functions:
        walk(child, depth + 1)


def r(t):
    """Rounded, so that float32 sums in another order print the same (+ 0.0 turns -0.0 into 0.0)."""
    return round(t.sum().item(), 3) + 0.0 if t.ndim == 0 or t.numel() > 3 else [round(v, 3) + 0.0 for v in t.tolist()]


w = torch.arange(15.).reshape(3, 5).div(10).requires_grad_()
b = torch.tensor([0.5, -1., 2.], requires_grad=True)
for shape in [(4, 5), (5,), (2, 4, 5), (2, 3, 4, 5)]:
    for bias in [b, None]:
        x = torch.linspace(-1, 1, int(torch.tensor(shape).prod())).reshape(shape).requires_grad_()
        y = F.linear(x, w, bias)
        print(list(shape), "bias" if bias is not None else "no bias", "->", list(y.shape))
        walk(y.grad_fn)
        w.grad = b.grad = None
        (y * y).sum().backward()
        print("  x.grad", r(x.grad), "w.grad", r(w.grad), "contiguous", w.grad.is_contiguous(),
              "b.grad", None if bias is None else r(b.grad))

print("which inputs need a gradient")
x = torch.ones(4, 5)
walk(F.linear(x, w, b).grad_fn)
walk(F.linear(x.requires_grad_(), w.detach(), b).grad_fn)
walk(F.linear(x, w, b.detach()).grad_fn)
print("a non-contiguous batch: matmul, then the bias added in place")
x = torch.linspace(-1, 1, 40).reshape(4, 2, 5).requires_grad_()
y = F.linear(x.transpose(0, 1), w, b)
walk(y.grad_fn)
y.sum().backward()
print("  x.grad", r(x.grad), "b.grad", r(b.grad))

print("nn.Linear")
torch.manual_seed(0)
layer = nn.Linear(5, 3)
out = layer(torch.ones(2, 5))
print(out.grad_fn, out.grad_fn.next_functions[2][0].next_functions[0][0].variable is layer.weight)
print([type(n).__name__ for n, _ in out.grad_fn.next_functions])

print("matmul folds a batch of rows into one mm or mv")
m = torch.ones(5, 3, requires_grad=True)
v = torch.ones(5, requires_grad=True)
x = torch.ones(2, 4, 5, requires_grad=True)
walk((x @ m).grad_fn)
walk((x @ v).grad_fn)
walk((x.transpose(0, 1) @ m).grad_fn)
walk(x.transpose(0, 1).reshape(8, 5).grad_fn)
