# In-place random fills as nn.init and tutorials call them. chibigrad draws other numbers than PyTorch
# (its own generator), so this prints what does not depend on the draw: shapes, dtypes, versions, graphs, errors.
import torch
from golden_helpers import attempt, graph

w = torch.empty(3, 4)
for name, args in (("normal_", ()), ("normal_", (2.0, 0.5)), ("uniform_", (-0.1, 0.1)), ("bernoulli_", (0.3,)),
                   ("exponential_", ())):
    before = w._version
    out = getattr(w, name)(*args)
    print(name, out is w, out.shape, out.dtype, w._version - before)
print("uniform range", bool(((w.uniform_(-0.1, 0.1) >= -0.1) & (w <= 0.1)).all()))
print("bernoulli values", bool(((w.bernoulli_(0.5) == 0) | (w == 1)).all()))
print("exponential positive", bool((w.exponential_(2.0) >= 0).all()))
d = torch.empty(5, dtype=torch.float64).normal_()
print("float64", d.dtype)

leaf = torch.zeros(2, requires_grad=True)
attempt("leaf", lambda: leaf.normal_())
with torch.no_grad():
    leaf.uniform_(0.0, 1.0)
print("under no_grad", leaf.requires_grad, leaf.is_leaf, leaf.grad_fn)
h = leaf * 2
h.normal_()
print("recorded", graph(h.grad_fn))
h.sum().backward()
print("grad through a fill", leaf.grad)
for name in ("uniform_", "bernoulli_", "exponential_"):
    h = leaf * 2
    getattr(h, name)()
    print(name, type(h.grad_fn).__name__)
