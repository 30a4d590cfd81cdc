# In-place changes through views: the base's history is rewritten (CopySlices), and a view whose
# base changed gets a new grad_fn (AsStridedBackward0). Values, gradients and graphs.
import torch
from golden_helpers import attempt, graph


a = torch.tensor([1., 2., 3.], requires_grad=True)


def run(label, change, use=lambda x: x):
    a.grad = None
    x = a * 2
    out = change(x)
    use(x).pow(2).sum().backward()
    print(label, x, "|", graph(x.grad_fn), "|", a.grad)
    return out


# x[i] += 1 is x[i] viewed, changed in place, then copied back.
run("iadd index", lambda x: x.__setitem__(0, x[0] + 1))
run("iadd view", lambda x: x[0].__iadd__(1))
run("slice mul_", lambda x: x[:2].mul_(3))
run("slice zero_", lambda x: x[1:].zero_())
run("setitem number", lambda x: x.__setitem__(slice(1, None), 5.))
run("setitem tensor", lambda x: x.__setitem__(0, a[2] * 10))
run("view add_", lambda x: x.view(3, 1).t().add_(1))
run("unsqueeze setitem", lambda x: x.unsqueeze(0).__setitem__((0, 1), 7.))
run("view of view", lambda x: x[1:][:1].mul_(5))
run("copy_", lambda x: x[:2].copy_(a[1:] * a[1:]))
run("clamp_", lambda x: x[1:].clamp_(max=5.))
run("div_ by tensor", lambda x: x[::2].div_(a[:2]))
run("two changes", lambda x: (x[0].mul_(2), x[1:].add_(x[0])))

# The changed view's own grad_fn, and what flows through it.
a.grad = None
x = a * 2
v = x[:2]
v.mul_(3)
print("view", v, type(v.grad_fn).__name__, graph(v.grad_fn))
(v * v).sum().backward()
print("through view", a.grad)

# A view made before its base changed in place sees the new values and gets a new grad_fn.
for label, change in [("base mul_", lambda x: x.mul_(3)), ("base setitem", lambda x: x.__setitem__(slice(1, None), 5.)),
                      ("other view", lambda x: x[1:].add_(1))]:
    a.grad = None
    x = a * 2
    w = x[:2]
    change(x)
    print(label, w, graph(w.grad_fn))
    (w * w).sum().backward()
    print(label, "grad", a.grad)

# A base that needed no gradient gets one through the value written into it.
p = torch.tensor([1., 2.], requires_grad=True)
x = torch.zeros(3)
w = x[:2]
x[1:] = p
print("no-grad base", x, graph(x.grad_fn), w, graph(w.grad_fn))
(w.sum() + x.sum()).backward()
print("no-grad base grad", p.grad)

# A leaf's view changed under no_grad: the view gets a new grad_fn over the leaf.
W = torch.ones(2, 3, requires_grad=True)
Wt = W.t()
with torch.no_grad():
    W.mul_(2)
print("leaf view", Wt, graph(Wt.grad_fn))
Wt.sum().backward()
print("leaf view grad", W.grad)

# Changing a view in place under no_grad does not rewrite the base's history.
a.grad = None
x = a * 2
v = x[:2]
with torch.no_grad():
    v.mul_(2)
print("no_grad change", x, graph(x.grad_fn), graph(v.grad_fn))

# What PyTorch refuses.
x = a * 2
attempt("split piece", lambda: x.split(2)[0].mul_(2))
attempt("split sizes piece", lambda: x.split([1, 2])[1].add_(1))
attempt("chunk piece", lambda: x.chunk(3)[2].zero_())
attempt("unbind piece", lambda: x.unbind()[1].mul_(2))
with torch.no_grad():
    late = x[:1]
attempt("view made under no_grad", lambda: late.mul_(2))
attempt("expanded", lambda: (a * 2).expand(2, 3).add_(1))
attempt("expanded, no grad", lambda: torch.zeros(3).expand(2, 3).add_(1))
attempt("view of leaf", lambda: a[:1].mul_(2))
attempt("setitem on leaf", lambda: a.__setitem__(0, 1.))
with torch.no_grad():
    x.split(2)[0].mul_(2)
print("split piece under no_grad", x)

# Saved tensors see changes made through a view: the version check still holds.
a.grad = None
x = a * 2
y = x.exp()
x[0] = 1.
attempt("saved then changed", lambda: y.sum().backward())
z = x * x
x[1:].zero_()
attempt("version after view change", lambda: x._version)
attempt("saved then changed via view", lambda: z.sum().backward())

# Double backward through CopySlices and AsStridedBackward0.
a.grad = None
x = a * 2
x[1:].mul_(a[:2])
g, = torch.autograd.grad(x.pow(3).sum(), a, create_graph=True)
print("first", g)
g.sum().backward()
print("second", a.grad)

# An operand that overlaps the written tensor in part is refused; the same elements are fine.
x = torch.arange(4.)
attempt("mul_ by own element", lambda: x.mul_(x[0]))
attempt("add_ own view", lambda: x.add_(x.view(4)))
attempt("setitem same slice", lambda: x.__setitem__(slice(1, None), x[1:]))
attempt("setitem shifted", lambda: x.__setitem__(slice(1, None), x[:3]))
attempt("iadd shifted", lambda: x[1:].__iadd__(x[:-1]))
attempt("disjoint halves", lambda: x[:2].add_(x[2:]))
y = torch.arange(4.).view(2, 2)
attempt("add_ own transpose", lambda: y.add_(y.t()))
attempt("mask setitem overlap", lambda: x.__setitem__(x > 1, x[:2]))
attempt("index setitem overlap", lambda: x.__setitem__([0, 1], x[2:]))
attempt("clamp_ by own element", lambda: x.clamp_(min=x[0]))

# relu_ through a view; a view of an inference tensor is an inference tensor.
a.grad = None
x = a - 2
x[::2].relu_()
x.sum().backward()
print("relu_ view", x, graph(x.grad_fn), a.grad)
with torch.inference_mode():
    frozen = torch.ones(3)
attempt("inference view", lambda: frozen.__setitem__(0, a[0]))
