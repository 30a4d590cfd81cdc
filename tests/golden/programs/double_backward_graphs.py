# The graphs create_graph records: the nodes a gradient's grad_fn leads to, as PyTorch names them.
import torch
import torch.nn.functional as F


def walk(fn, depth=0):
    if fn is None or depth > 3:
        return
    print("  " * depth + type(fn).__name__)
    for child, _ in fn.next_functions:
        walk(child, depth + 1)


x = torch.tensor(3., requires_grad=True)
(g,) = torch.autograd.grad(x ** 3, x, create_graph=True)
walk(g.grad_fn)
(g2,) = torch.autograd.grad(g, x)
print(g, g2)

a = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
b = torch.tensor([[0.5, -1.], [2., 1.]], requires_grad=True)
ga, gb = torch.autograd.grad((a @ b).sum(), (a, b), create_graph=True)
walk(ga.grad_fn)
walk(gb.grad_fn)
print(torch.autograd.grad((ga * gb).sum(), (a, b)))

v = torch.tensor([1., -2.], requires_grad=True)
(gv,) = torch.autograd.grad(a.mv(v).sum(), v, create_graph=True)
walk(gv.grad_fn)

w = torch.tensor([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], requires_grad=True)
bias = torch.tensor([0., 1., 2.], requires_grad=True)
gx, gw = torch.autograd.grad(F.linear(a, w, bias).pow(2).sum(), (a, w), create_graph=True)
walk(gx.grad_fn)
walk(gw.grad_fn)
print(torch.autograd.grad(gx.sum() + gw.sum(), (a, w, bias)))

p = torch.tensor([[[1., 2.], [3., 4.]], [[0., 1.], [1., 0.]]], requires_grad=True)
q = torch.tensor([[[1., -1.], [2., 0.5]], [[3., 1.], [0., 2.]]], requires_grad=True)
gp, gq = torch.autograd.grad(torch.bmm(p, q).pow(2).sum(), (p, q), create_graph=True)
walk(gp.grad_fn)
walk(gq.grad_fn)
print(torch.autograd.grad((gp * gq).sum(), (p, q)))
