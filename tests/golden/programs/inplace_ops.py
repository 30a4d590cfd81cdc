# In-place ops: values, versions, grad_fn rebasing and gradients through them.
import torch

a = torch.tensor([1., -2., 3.], requires_grad=True)


def fresh():
    return a * 1


ops = {
    "x.add_(1)": lambda x: x.add_(1), "x += 1": lambda x: x.__iadd__(1), "x.mul_(2)": lambda x: x.mul_(2),
    "x *= x.detach()": lambda x: x.__imul__(x.detach()), "x.sub_(1)": lambda x: x.sub_(1),
    "x.div_(2)": lambda x: x.div_(2), "x -= 2": lambda x: x.__isub__(2), "x /= 4": lambda x: x.__itruediv__(4),
    "x[0] = 5": lambda x: x.__setitem__(0, 5.), "x[1:] = 0": lambda x: x.__setitem__(slice(1, None), 0.),
    "x.clamp_(0, 1)": lambda x: x.clamp_(0, 1), "x.clamp_(min=0)": lambda x: x.clamp_(min=0),
    "x.zero_()": lambda x: x.zero_(), "x.fill_(3)": lambda x: x.fill_(3.),
    "x.copy_(t)": lambda x: x.copy_(torch.tensor([7., 8., 9.])),
}
for k, f in ops.items():
    x = fresh()
    r = f(x)
    print(f"{k:18s} {type(x.grad_fn).__name__:14s} returns self: {r is x}  _version={x._version}  {x}")
    try:
        x.sum().backward()
        print(f"{'':18s} a.grad={a.grad}")
    except RuntimeError as e:
        print(f"{'':18s} {e}")
    a.grad = None

x = fresh()
x[0] = 5.
print("x[0]=5 repr:", x)
y = torch.zeros(3)
y[0] = a[0]
print("plain y[0] = a[0]:", y, y.is_leaf, y.requires_grad)
y.sum().backward()
print(a.grad)
a.grad = None

x = fresh()
x.mul_(a)
x.mul_(a)
x.sum().backward()
print("x*a*a:", a.grad)
a.grad = None

t = torch.tensor([1., 2., 3.])
print(t._version)
t.add_(1)
t.mul_(2)
t[0] = 0.
t += 1
print(t, t._version, t.requires_grad)
u = torch.ones(3)
u.copy_(torch.tensor([1, 2, 3]))
print(u, u.dtype)
w = torch.tensor([1., 2.])
w.requires_grad_()
print(w, w.is_leaf, w.requires_grad_(False), w.requires_grad)
