# torch.autograd.graph.saved_tensors_hooks as PyTorch's "Hooks for saved tensors" tutorial uses them:
# what pack sees, when unpack runs, offloading, nesting, double backward, and the errors.
import torch
from torch.autograd.graph import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks
from golden_helpers import attempt, graph

calls = []


def pack(t):
    calls.append(("pack", tuple(t.shape), t.requires_grad, t.grad_fn is not None, torch.is_grad_enabled()))
    return t


def unpack(t):
    calls.append(("unpack", tuple(t.shape)))
    return t


a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
with saved_tensors_hooks(pack, unpack):
    y = a * b
    z = y.exp()
    w = z.sum()
print(calls)
calls.clear()
w.backward()
print(calls, a.grad, b.grad)

# Packing into something else entirely: the node keeps only what pack returned.
store = {}


def pack_to_store(t):
    key = len(store)
    store[key] = t.detach().clone()
    return key


def unpack_from_store(key):
    return store[key]


a.grad = None
with saved_tensors_hooks(pack_to_store, unpack_from_store):
    loss = (a.sin() * b).pow(2).sum()
print(sorted(store), [tuple(t.shape) for t in store.values()])
loss.backward()
print(a.grad)

# No version check under hooks: the hook owns the saved value.
with saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
    c = a * 1
    d = c * c
with torch.no_grad():
    c.add_(1)
d.sum().backward()
print("after an in-place change", a.grad)

# Nested blocks: the innermost pair is used.
order = []
with saved_tensors_hooks(lambda t: ("outer", t), lambda p: p[1]):
    with saved_tensors_hooks(lambda t: ("inner", t), lambda p: (order.append(p[0]), p[1])[1]):
        g = a * b
    h = a * b
g.sum().backward()
h.sum().backward()
print("nested", order)

# Double backward through unpacked tensors.
with saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
    cube = (a ** 3).sum()
(ga,) = torch.autograd.grad(cube, a, create_graph=True)
print(ga, graph(ga.grad_fn))
(gga,) = torch.autograd.grad(ga.sum(), a)
print(gga)

# save_on_cpu on the CPU: the same gradients.
a.grad = None
with save_on_cpu(pin_memory=False):
    (a * b).sum().backward()
print("save_on_cpu", a.grad)

with saved_tensors_hooks(lambda t: 3, lambda x: x):
    e = (a * b).sum()
attempt("unpack returns an int", lambda: e.backward())
with disable_saved_tensors_hooks("hooks are not allowed here"):
    attempt("disabled", lambda: saved_tensors_hooks(pack, unpack).__enter__())
retained = (a * b).sum()
retained.backward(retain_graph=True)
with saved_tensors_hooks(pack, unpack):
    q = a.exp().sum()
q.backward()
attempt("second backward", lambda: q.backward())
print(isinstance(q.grad_fn, torch.autograd.graph.Node), q.grad_fn.name())
