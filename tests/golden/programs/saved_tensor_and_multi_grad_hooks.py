# The autograd notes' hooks on one saved tensor (grad_fn._raw_saved_<name>.register_hooks), the docs'
# examples of torch.autograd.graph.register_multi_grad_hook ("all" and "any") and
# allow_mutation_on_saved_tensors, and the nodes autograd.functional.jacobian builds with create_graph
# when an input was broadcast (PyTorch sums a gradient back without a view unless dims were added).
import torch
from torch.autograd.functional import jacobian
from golden_helpers import attempt, graph


def pack_hook(x):
    print("Packing", x, "grad enabled:", torch.is_grad_enabled())
    return x


def unpack_hook(x):
    print("Unpacking", x)
    return x


a = torch.ones(5, requires_grad=True)
b = torch.ones(5, requires_grad=True) * 2
y = a * b
y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook)
print("saved self", y.grad_fn._saved_self)
y.sum().backward()
print("a.grad", a.grad)
attempt("after backward", lambda: y.grad_fn._raw_saved_self.register_hooks(pack_hook, unpack_hook))

w = torch.full((3,), 2.0, requires_grad=True)
x = torch.arange(3.0, requires_grad=True)
y = w * x
y.grad_fn._raw_saved_other.register_hooks(lambda t: t * 10, lambda t: t)
attempt("twice", lambda: y.grad_fn._raw_saved_other.register_hooks(pack_hook, unpack_hook))
y.sum().backward()
print("w.grad (x packed times 10)", w.grad)

y = x.exp()
y.grad_fn._raw_saved_result.register_hooks(lambda t: (print("pack result", t.grad_fn, t.requires_grad), t)[1],
                                           lambda t: t)
print("saved result", y.grad_fn._saved_result)
y.add_(1)  # the hook holds the data: no version check, backward sees the change
y.sum().backward()
print("x.grad", x.grad)

y = w * x
y.grad_fn._raw_saved_self.register_hooks(lambda t: 3, lambda p: p)
attempt("unpack returns an int", lambda: y.sum().backward())

# register_multi_grad_hook, the docs' example
a = torch.tensor([[0.5, 1.0, 2.0], [1.5, -1.0, 0.25]], requires_grad=True)
b = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
c = a * b
d = a * b


def fn(grads):
    print("all:", [g is not None for g in grads])


handle = torch.autograd.graph.register_multi_grad_hook((a, b, c, d), fn)
c.sum().backward(retain_graph=True)
c.sum().backward(inputs=(a,), retain_graph=True)
(c + d).sum().backward(retain_graph=True)
attempt("autograd.grad with leaves", lambda: torch.autograd.grad((c * d).sum(), (a,), retain_graph=True))
handle.remove()
c.sum().backward(retain_graph=True)
print("removed: nothing printed")

seen = []
any_handle = torch.autograd.graph.register_multi_grad_hook((a, b), lambda g: seen.append(g.clone()), mode="any")
(a * b).sum().backward()
(a * 3).sum().backward()
print("any:", len(seen), seen)
any_handle.remove()
attempt("bad mode", lambda: torch.autograd.graph.register_multi_grad_hook((a, b), fn, mode="first"))

# allow_mutation_on_saved_tensors, the docs' example
with torch.autograd.graph.allow_mutation_on_saved_tensors():
    a = torch.ones(2, 3, requires_grad=True)
    b = a.clone()
    out = (b ** 2).sum()
    b.sin_()
    out.sum().backward()
    print("a.grad", a.grad, b)
    attempt("nested", lambda: torch.autograd.graph.allow_mutation_on_saved_tensors().__enter__())
with torch.autograd.graph.allow_mutation_on_saved_tensors():
    out = (a.exp() * 2).sum()
attempt("backward outside", lambda: out.backward())

# jacobian with create_graph: the nodes of a broadcast input's gradient
v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
s = torch.tensor(2.0, requires_grad=True)
J = jacobian(lambda s: s * v, s, create_graph=True)
print("jacobian 0-d input", J, graph(J.grad_fn, 4))
J = jacobian(lambda v: v.unsqueeze(0) * v.unsqueeze(1), v, create_graph=True)
print("jacobian outer", J.shape, graph(J.grad_fn, 5))
print("sum_to_size", graph(v.expand(2, 3).sum_to_size(1, 3).grad_fn), graph(v.expand(2, 3).sum_to_size(3).grad_fn),
      graph(v.sum_to_size(()).grad_fn))
