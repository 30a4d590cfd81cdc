# gather, scatter, index_add, sort, topk and friends, as classification and attention code uses them,
# with their gradients and errors; log2/log10/log1p/expm1; torch.all/any/dot; Tensor.equal.
import torch
from golden_helpers import attempt, graph

logits = torch.tensor([[2.0, -1.0, 0.5], [0.1, 0.3, -0.2], [1.5, 1.5, -3.0]], requires_grad=True)
labels = torch.tensor([0, 2, 1])
logp = logits.log_softmax(dim=1)
picked = logp.gather(1, labels.unsqueeze(1))
print("gather", picked, graph(picked.grad_fn))
loss = -picked.mean()
loss.backward()
print("gather grad", logits.grad)

x = torch.tensor([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]], requires_grad=True)
s = torch.sort(x, dim=1)
print("sort", s)
print("sort descending", x.sort(descending=True))
print("sort dim 0", torch.sort(x, 0).indices)
print("argsort", torch.argsort(x, dim=1), x.argsort(dim=0, descending=True))
values, indices = torch.topk(x, 2)
print("topk", values, indices)
print("topk smallest", x.topk(1, dim=0, largest=False))
(s.values * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print("sort grad", x.grad)
x.grad = None
(values ** 2).sum().backward()
print("topk grad", x.grad)
print("ties", torch.sort(torch.tensor([2, 1, 2, 1, 0])), torch.tensor([1.0, 1.0, 0.0]).topk(2))

base = torch.zeros(3, 4)
src = torch.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]], requires_grad=True)
idx = torch.tensor([[0, 1, 2, 0], [2, 0, 1, 1]])
out = torch.scatter(base, 0, idx, src)
print("scatter", out, graph(out.grad_fn))
(out * torch.arange(12.0).reshape(3, 4)).sum().backward()
print("scatter grad", src.grad)
print("scatter value", base.scatter(1, torch.tensor([[1], [3], [0]]), 7.5))
print("scatter_add", torch.zeros(5).scatter_add(0, torch.tensor([0, 1, 1, 4]), torch.tensor([1.0, 2.0, 3.0, 4.0])))
counts = torch.zeros(4).scatter_add_(0, torch.tensor([3, 3, 1]), torch.ones(3))
print("scatter_add_", counts)
one_hot = torch.zeros(3, 4).scatter_(1, torch.tensor([[2], [0], [3]]), 1.0)
print("scatter_ one-hot", one_hot)

acc = torch.ones(3, 2)
rows = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
added = acc.index_add(0, torch.tensor([2, 0, 2]), rows)
print("index_add", added, graph(added.grad_fn))
(added * torch.tensor([[1.0, 1.0], [0.0, 0.0], [2.0, 3.0]])).sum().backward()
print("index_add grad", rows.grad)
print("index_add alpha", torch.zeros(2, 3).index_add_(1, torch.tensor([0, 0]), torch.ones(2, 2), alpha=-2))
sel = rows.index_select(0, torch.tensor([2, 2, 0]))
print("index_select", sel, graph(sel.grad_fn))

attempt("gather float index", lambda: x.gather(1, torch.tensor([[0.0], [1.0]])))
attempt("gather out of range", lambda: x.gather(1, torch.tensor([[0], [5]])))
attempt("gather ndim", lambda: x.gather(1, torch.tensor([0, 1])))
attempt("scatter float index", lambda: base.scatter(0, torch.tensor([[0.0]]), 1.0))
attempt("topk too many", lambda: x.topk(4))

p = torch.tensor([0.5, 1.0, 8.0], requires_grad=True)
for name in ("log2", "log10", "log1p", "expm1"):
    y = getattr(torch, name)(p)
    (g,) = torch.autograd.grad(y.sum(), p, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), p)
    print(name, y, getattr(p, name)().grad_fn.name(), g, gg)
print("log1p tiny", torch.log1p(torch.tensor([1e-10], dtype=torch.float64)),
      torch.expm1(torch.tensor([1e-10], dtype=torch.float64)))

m = torch.tensor([[True, False], [True, True]])
print("all any", torch.all(m), torch.any(m), torch.all(m, dim=1), torch.any(m, 0), torch.all(torch.tensor([1.0, 2.0])))
a, b = torch.tensor([1.0, 2.0, 3.0], requires_grad=True), torch.tensor([4.0, 5.0, 6.0])
d = torch.dot(a, b)
d.backward()
print("dot", d, a.grad)
attempt("dot 2-D", lambda: torch.dot(torch.ones(2, 2), torch.ones(2, 2)))
print("equal", torch.tensor([1, 2]).equal(torch.tensor([1, 2])), torch.equal(torch.ones(2), torch.ones(3)),
      x.equal(x.detach().clone()))
