# Follows the torch.Tensor.backward and torch.autograd.backward documentation: the inputs= argument
# (accumulate into some leaves only), gradient= for non-scalar outputs, and the errors users hit.
import torch
from golden_helpers import attempt

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.tensor([4.0, 5.0, 6.0], requires_grad=True)
c = (a * b).sum()
c.backward(inputs=[a], retain_graph=True)
print(a.grad, b.grad)
c.backward(inputs=[b])
print(a.grad, b.grad)

# inputs may be a single tensor, and an intermediate tensor (its .grad is filled like retain_grad)
x = torch.tensor([0.5, -1.0], requires_grad=True)
h = x.exp()
y = (h * 3).sum()
y.backward(inputs=h, retain_graph=True)
print(h.grad, x.grad, h.is_leaf)
y.backward(inputs=(x, h))
print(h.grad, x.grad)

# gradient= for a vector output: a vector-Jacobian product
v = torch.tensor([1.0, 0.1, 0.01])
z = a ** 2
z.backward(gradient=v)
print(a.grad)
torch.autograd.backward([(a * 2).sum()], inputs=[a])
print(a.grad)

# the messages
attempt("non-scalar", lambda: (a * 2).backward())
attempt("empty inputs", lambda: (a * 2).sum().backward(inputs=[]))
attempt("no grad", lambda: torch.tensor([1.0]).sum().backward())
w = torch.tensor([1.0, 2.0], requires_grad=True)
attempt("unused input", lambda: torch.autograd.grad((w * 2).sum(), [w, torch.ones(2, requires_grad=True)]))
attempt("allow_unused", lambda: torch.autograd.grad((w * 2).sum(), [w, torch.ones(2, requires_grad=True)],
                                                    allow_unused=True))
attempt("materialize", lambda: torch.autograd.grad((w * 2).sum(), [w, torch.ones(2, requires_grad=True)],
                                                   materialize_grads=True))
out = (w ** 2).sum()
out.backward()
attempt("twice", lambda: out.backward())
