# Errors raised by backward / autograd.grad, with PyTorch's texts.
import torch
from golden_helpers import attempt


x = torch.tensor([1., 2., 3.], requires_grad=True)
attempt("1 non-scalar", lambda: (x * 2).backward())
x1 = torch.tensor([1.], requires_grad=True)
(x1 * 2).backward()
print(x1.grad)
x11 = torch.ones(1, 1, requires_grad=True)
(x11 * 3).backward()
print(x11.grad)
attempt("5a no grad", lambda: (torch.tensor([1., 2.]) * 2).sum().backward())
xs = torch.tensor(1., requires_grad=True)
zs = torch.tensor(2., requires_grad=True)
attempt("5b unused", lambda: torch.autograd.grad(xs * 2, [xs, zs]))
attempt("5b unused first", lambda: torch.autograd.grad(xs * 2, [zs, xs]))
print(torch.autograd.grad(xs * 2, [xs, zs], allow_unused=True))
attempt("5d", lambda: torch.autograd.grad(xs * torch.tensor(3.), [xs, torch.tensor(3.)]))
attempt("5e", lambda: torch.autograd.grad(torch.tensor(2.), [xs]))
attempt("5f", lambda: torch.autograd.grad(x * 2, x))
attempt("8", lambda: (x * 2).backward(torch.ones(2)))
x23 = torch.ones(2, 3, requires_grad=True)
y = x23 * 2
for g in (torch.ones(3), torch.ones(3, 2), torch.ones(2, 3, dtype=torch.float64)):
    attempt("8b", lambda: y.backward(g, retain_graph=True))
print(x23.grad, x23.grad.dtype)
x0 = torch.tensor(2., requires_grad=True)
attempt("8c", lambda: (x0 * 3).backward(torch.tensor([1.])))
attempt("argmax", lambda: x.argmax().backward())
attempt("compare", lambda: (x > 1).sum().backward())
d = x.detach()
print(d.requires_grad, d.is_leaf, d.grad_fn)
attempt("detached", lambda: (d * 2).sum().backward())
with torch.no_grad():
    z = (x * 2).sum()
print(z.requires_grad, z.grad_fn)
attempt("no_grad graph", lambda: z.backward())
attempt("two outputs", lambda: torch.autograd.backward([x.sum(), torch.tensor(1.)]))
print(x.grad)
