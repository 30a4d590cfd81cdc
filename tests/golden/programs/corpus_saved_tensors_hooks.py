# Follows PyTorch's "Hooks for saved tensors" tutorial and the torch.autograd.graph docs: pack/unpack
# hooks that print or transform what is saved, saved_tensors_hooks as a context manager, _saved_*
# attributes of grad_fn, save_on_cpu and disable_saved_tensors_hooks.
import torch

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a.exp()
print(b.grad_fn._saved_result.equal(b), b.grad_fn._saved_result is b)
y = a.pow(2)
print(y.grad_fn._saved_self is a, y.grad_fn._saved_exponent)
x = torch.tensor([2.0, 0.5], requires_grad=True)
z = x.sin()
print(z.grad_fn._saved_self, z.grad_fn._raw_saved_self)


def pack_hook(x):
    print("Packing", x)
    return x


def unpack_hook(x):
    print("Unpacking", x)
    return x


with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = a * b
y.sum().backward()
print(a.grad)


# a hook pair that saves a copy multiplied by 2: the gradient sees the changed value
def pack_double(t):
    return t * 2


def unpack_identity(t):
    return t


c = torch.tensor([1.0, 1.0], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_double, unpack_identity):
    out = c * c
out.sum().backward()
print(c.grad)


# storing saved tensors elsewhere (here: a dict keyed by a counter), as the tutorial's disk example does
storage = {}


def pack_to_store(t):
    key = len(storage)
    storage[key] = t.clone()
    return key


def unpack_from_store(key):
    return storage[key]


w = torch.tensor([0.5, -1.5, 2.0], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_to_store, unpack_from_store):
    loss = (w.tanh() * w).sum()
print(sorted(storage), loss.grad_fn.name())
loss.backward()
print(w.grad)

# save_on_cpu behaves the same on a CPU-only machine
v = torch.tensor([1.0, -2.0], requires_grad=True)
with torch.autograd.graph.save_on_cpu(pin_memory=False):
    s = (v * v * v).sum()
s.backward()
print(v.grad)

with torch.autograd.graph.disable_saved_tensors_hooks("saved tensors hooks are off here"):
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            pass
    except RuntimeError as e:
        print("RuntimeError:", e)

# after backward the saved tensors are freed
t = torch.tensor([1.0, 2.0], requires_grad=True)
u = t.exp()
u.sum().backward()
try:
    u.grad_fn._saved_result
except RuntimeError as e:
    print("RuntimeError:", e)
