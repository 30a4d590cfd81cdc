# The order in which the engine reaches tensors: PyTorch runs the most recently created ready node first.
import torch
order = []
a = torch.tensor(1., requires_grad=True)
b = a * 2
c = a * 3
d = b.exp()
e = c + d
f = b * e
for name, t in dict(a=a, b=b, c=c, d=d, e=e, f=f).items():
    t.register_hook(lambda g, name=name: order.append(name))
f.backward()
print(order, a.grad)
order.clear()
x = torch.tensor([1., 2.], requires_grad=True)
y = torch.tensor([3., 4.], requires_grad=True)
u = x * y
v = x + y
w = u.sum() + v.sum() + (x * 2).sum()
for name, t in dict(x=x, y=y, u=u, v=v).items():
    t.register_hook(lambda g, name=name: order.append(name))
w.backward()
print(order)
