# Higher-order gradients with create_graph: second and third derivatives.
import torch

x = torch.tensor(3., requires_grad=True)
y = x ** 3
(g,) = torch.autograd.grad(y, x, create_graph=True)
print(g)
(g2,) = torch.autograd.grad(g, x, create_graph=True)
print(g2)
(g3,) = torch.autograd.grad(g2, x)
print(g3)

x = torch.tensor([0.5, 1.0], requires_grad=True)
y = (x.sin() * x.exp()).sum()
(g,) = torch.autograd.grad(y, x, create_graph=True)
print(g)
(h,) = torch.autograd.grad(g.sum(), x, create_graph=True)
print(h)
(t,) = torch.autograd.grad(h.sum(), x)
print(t)

x = torch.tensor(2., requires_grad=True)
y = x.tanh() * x
y.backward(create_graph=True)
print(x.grad.requires_grad, x.grad.grad_fn is not None)
gx = x.grad
x.grad = None
gx.backward()
print(x.grad)

a = torch.tensor([1., 2.], requires_grad=True)
b = torch.tensor([3., 4.], requires_grad=True)
out = (a * a * b).sum()
ga, gb = torch.autograd.grad(out, (a, b), create_graph=True)
print(ga, gb)
(ga * gb).sum().backward()
print(a.grad, b.grad)
print(torch.autograd.grad((a * 2).sum(), a))
print(torch.autograd.grad([(a * 2).sum(), (a * a).sum()], [a]))
print(torch.autograd.grad(a * b, [a, b], grad_outputs=torch.tensor([1., -1.])))
print(torch.autograd.grad((a * 2).sum(), a, retain_graph=True)[0].requires_grad)
