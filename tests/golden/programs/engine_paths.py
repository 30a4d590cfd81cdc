# The engine: every path's gradient is summed, each node runs once, inputs= and leaves used twice.
import torch

x = torch.tensor(2.0, requires_grad=True)
y = 2 * x + 5.0
L = y + x
L.backward()
print(x.grad)

a = torch.tensor([1., 2.], requires_grad=True)
s = a * a
d = s.sin() + s.cos() + s * 3
d.sum().backward()
print(a.grad)

calls = []
x = torch.tensor(1.5, requires_grad=True)
b = x * 2
b.register_hook(lambda g: calls.append(float(g)))
c = b * b + b.exp() + b
c.backward()
print(len(calls), calls, x.grad)

x = torch.tensor(1., requires_grad=True)
z = torch.tensor(2., requires_grad=True)
y = x * z
y.backward(inputs=[x])
print(x.grad, z.grad)
y = x * z * z
y.backward(inputs=z)
print(x.grad, z.grad)
h = x * 3
out = h * h
out.backward(inputs=[h])
print(h.grad, x.grad)

w = torch.tensor([1., -1.], requires_grad=True)
u = w.exp()
loss = (u * u).sum() + (u * w).sum() + w.sum()
torch.autograd.backward(loss)
print(w.grad)
torch.autograd.backward([(w * 2).sum(), (w * 3).sum()])
print(w.grad)
torch.autograd.backward(w * 1, grad_tensors=torch.tensor([1., 10.]))
print(w.grad)

x = torch.tensor(2., requires_grad=True)
y = x + 1
y.backward()
y.backward()
print(x.grad)
y = x * 2
y.backward()
try:
    y.backward()
except RuntimeError as e:
    print(e)
y = x * x
y.backward(retain_graph=True)
y.backward()
print(x.grad)
x = torch.tensor([1., 2.], requires_grad=True)
x.sum().backward()
x.sum().backward()
print(x.grad)
x.grad.zero_()
print(x.grad)
x.backward(torch.ones(2))
print(x.grad)
x2 = torch.tensor(5., requires_grad=True)
x2.backward()
print(x2.grad)
g = torch.tensor([1., 1.])
x = torch.tensor([1., 2.], requires_grad=True)
x.backward(g)
x.grad.mul_(5)
print(g, x.grad)
a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([3., 4.], requires_grad=True)
(a + b).sum().backward()
a.grad.zero_()
print(a.grad, b.grad)
