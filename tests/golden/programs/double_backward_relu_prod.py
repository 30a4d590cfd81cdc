# Double backward through ReLU (threshold_backward's edge to the saved output) and through prod with zeros.
import torch


def walk(fn, depth=1):
    if fn is None:
        print("  " * depth + "None")
        return
    print("  " * depth + type(fn).__name__)
    for child, _ in fn.next_functions:
        walk(child, depth + 1)


print("relu: the gradient's own graph")
x = torch.tensor([-1., 0.5, 2.], requires_grad=True)
bias = torch.tensor([0.25, -1., 0.], requires_grad=True)
y = (x + bias).relu()
g, = torch.autograd.grad(y.sum(), x, create_graph=True)
print(g)
walk(g.grad_fn)
g.sum().backward()
print("x.grad", x.grad, "bias.grad", bias.grad)

print("relu: a gradient penalty")
w = torch.tensor([1., -2., 3.], requires_grad=True)
b = torch.tensor([0.5, 0.5, -4.], requires_grad=True)
z = (w * 2 + b).relu()
gw, = torch.autograd.grad((z * z).sum(), w, create_graph=True)
print(gw)
walk(gw.grad_fn)
gw.pow(2).sum().backward()
print("w.grad", w.grad, "b.grad", b.grad)

print("prod with zeros: second derivatives")
for values in [[2., 0., -3.], [2., 0., 0.], [0., 0., 0.], [1.5, 2., -3.]]:
    a = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    ga, = torch.autograd.grad(a.prod(), a, create_graph=True)
    rows = [torch.autograd.grad(ga[i], a, retain_graph=True)[0].tolist() for i in range(3)]
    print(values, ga.tolist(), rows)
m = torch.tensor([[2., 0.], [0., 0.], [-1., 4.]], dtype=torch.float64, requires_grad=True)
gm, = torch.autograd.grad(m.prod(0).sum(), m, create_graph=True)
print(gm.tolist())
gm.pow(2).sum().backward()
print(m.grad.tolist())
