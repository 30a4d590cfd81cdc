# Hessians and Hessian-vector products, after PyTorch's torch.autograd.functional docs
# (https://pytorch.org/docs/stable/autograd.html#functional-higher-level-api: hessian(pow_reducer, inputs),
# hvp, vhp, jacobian with create_graph) and the Rosenbrock example used in optimisation tutorials.
import torch
from torch.autograd.functional import hessian, hvp, vhp, jacobian


def rosenbrock(x):
    return ((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2).sum()


def pow_reducer(x):
    return x.pow(3).sum()


inputs = torch.tensor([[0.5, -1.0], [2.0, 0.25]])
print(hessian(pow_reducer, inputs).shape)
print(hessian(pow_reducer, inputs)[0, 1])
x = torch.tensor([-1.0, 1.5, 0.5])
H = hessian(rosenbrock, x)
print(H)
v = torch.tensor([1.0, 0.0, -1.0])
print(hvp(rosenbrock, x, v))
print(vhp(rosenbrock, x, v))
print(torch.allclose(hvp(rosenbrock, x, v)[1], H @ v))
g = jacobian(rosenbrock, x, create_graph=True)
print(g)
step = torch.linalg.solve(H, jacobian(rosenbrock, x))
print(x - step)


def pow_adder_reducer(x, y):
    return (2 * x.pow(2) + 3 * y.pow(2)).sum()


print(hessian(pow_adder_reducer, (torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]))))
