# torch.autograd.functional as its documentation and tutorials use it: vjp, jvp, jacobian, hessian,
# vhp, hvp, with tuples, create_graph, strict, and the errors for wrong arguments.
import torch
from torch.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp
from golden_helpers import attempt, graph


def exp_reducer(x):
    return x.exp().sum(dim=1)


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


def pow_reducer(x):
    return x.pow(3).sum()


def pow_adder_reducer(x, y):
    return (2 * x.pow(2) + 3 * y.pow(2)).sum()


x = torch.tensor([[0.1, 0.2], [0.3, 0.4]])
a, b = torch.tensor([0.5, -1.0]), torch.tensor([2.0, 0.25])
print("jacobian", jacobian(exp_reducer, x))
j = jacobian(exp_reducer, x, create_graph=True)
print("jacobian create_graph", j.requires_grad, graph(j.grad_fn))
print("jacobian tuple", jacobian(exp_adder, (a, b)))
print("jacobian two outputs", jacobian(lambda x: (x * 2, x.sum()), a))
print("jacobian 0-d", jacobian(lambda x: x ** 2, torch.tensor(3.0)))
print("hessian", hessian(pow_reducer, x))
print("hessian tuple", hessian(pow_adder_reducer, (a, b)))
print("vjp", vjp(exp_reducer, x, torch.ones(2)))
out, v = vjp(exp_reducer, x, torch.ones(2), create_graph=True)
print("vjp create_graph", out.requires_grad, v.requires_grad)
print("vjp tuple", vjp(exp_adder, (a, b), torch.ones(2)))
print("vjp scalar", vjp(pow_reducer, x))
print("jvp", jvp(exp_reducer, x, torch.ones(2, 2)))
print("jvp tuple", jvp(exp_adder, (a, b), (torch.ones(2), torch.ones(2))))
print("vhp", vhp(pow_reducer, x, torch.ones(2, 2)))
print("hvp", hvp(pow_reducer, x, torch.ones(2, 2)))
print("vhp tuple", vhp(pow_adder_reducer, (a, b), (torch.zeros(2), torch.ones(2))))
print("hvp tuple", hvp(pow_adder_reducer, (a, b), (torch.zeros(2), torch.ones(2))))

# The inputs are not modified, and a tensor the function captures is not differentiated.
w = torch.tensor([1.0, 2.0], requires_grad=True)
print("captured", jacobian(lambda x: x * w, a), w.grad, a.requires_grad)

# A second derivative through create_graph: d/dw of the Jacobian's trace.
jw = jacobian(lambda x: x * w * x, a, create_graph=True)
(jw * torch.eye(2)).sum().backward()
print("through jacobian", w.grad)

# Unused inputs: zeros, or an error in strict mode.
print("unused", jacobian(lambda x, y: x * 2, (a, b)))
attempt("unused strict", lambda: jacobian(lambda x, y: x * 2, (a, b), strict=True))
attempt("vjp unused strict", lambda: vjp(lambda x, y: (x * 2).sum(), (a, b), strict=True))
attempt("constant strict", lambda: vjp(lambda x: torch.ones(2), a, torch.ones(2), strict=True))
attempt("linear hessian strict", lambda: hessian(lambda x: (2 * x).sum(), a, strict=True))
print("linear hessian", hessian(lambda x: (2 * x).sum(), a))

# Wrong arguments.
attempt("v missing", lambda: vjp(exp_reducer, x))
attempt("v missing jvp", lambda: jvp(exp_reducer, x))
attempt("v size", lambda: vjp(exp_reducer, x, torch.ones(3)))
attempt("v length", lambda: jvp(exp_adder, (a, b), (torch.ones(2),)))
attempt("v tuple for one", lambda: vjp(exp_reducer, x, (torch.ones(2), torch.ones(2))))
attempt("v entry size", lambda: jvp(exp_adder, (a, b), (torch.ones(2), torch.ones(3))))
attempt("list input", lambda: jacobian(exp_reducer, [1.0, 2.0]))
attempt("tuple with a float", lambda: jacobian(exp_adder, (a, 2.0)))
attempt("output not a tensor", lambda: vjp(lambda x: 3.0, a))
attempt("hessian of a vector", lambda: hessian(lambda x: x * 2, a))
attempt("hessian of a tuple", lambda: hessian(lambda x: (x.sum(), x.sum()), a))
attempt("hvp of a vector", lambda: hvp(lambda x: x * 2, a, torch.ones(2)))

# Strategies: reverse mode is the default; vectorize=True gives the same Jacobian.
print("vectorize", jacobian(exp_reducer, x, vectorize=True))
print("hessian vectorize", hessian(pow_reducer, a, vectorize=True))
attempt("forward-mode", lambda: jacobian(exp_reducer, x, strategy="forward-mode"))
attempt("bad strategy", lambda: jacobian(exp_reducer, x, strategy="sideways"))
attempt("hessian forward-mode", lambda: hessian(pow_reducer, a, outer_jacobian_strategy="forward-mode"))
