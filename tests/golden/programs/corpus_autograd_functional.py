# Follows the torch.autograd.functional documentation examples: jacobian, hessian, vjp, jvp, hvp and
# vhp, with the docs' functions (exp_reducer, pow_reducer, exp_adder) on fixed inputs.
import torch
from torch.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp


def exp_reducer(x):
    return x.exp().sum(dim=1)


inputs = torch.tensor([[0.1, -0.2], [0.3, 0.0]])
print(jacobian(exp_reducer, inputs))
print(jacobian(exp_reducer, inputs, create_graph=True))


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


inputs = (torch.tensor([0.5, -1.0]), torch.tensor([1.0, 2.0]))
print(jacobian(exp_adder, inputs))


def pow_reducer(x):
    return x.pow(3).sum()


inputs = torch.tensor([[1.0, -0.5], [2.0, 0.25]])
print(hessian(pow_reducer, inputs))


def pow_adder_reducer(x, y):
    return (2 * x.pow(2) + 3 * y.pow(2)).sum()


inputs = (torch.tensor([1.0, 2.0]), torch.tensor([-1.0, 0.5]))
print(hessian(pow_adder_reducer, inputs))

inputs = torch.tensor([[0.2, 0.4], [-0.1, 0.0]])
v = torch.ones(2)
print(vjp(exp_reducer, inputs, v))
v = torch.ones(2, 2)
print(jvp(exp_reducer, inputs, v))

x = torch.tensor([[1.0, 2.0], [3.0, -1.0]])
print(vhp(pow_reducer, x, torch.ones(2, 2)))
print(hvp(pow_reducer, x, torch.ones(2, 2)))


# the Jacobian of a small network's output with respect to its input
net = torch.nn.Linear(2, 3)
with torch.no_grad():
    net.weight.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    net.bias.zero_()
J = jacobian(lambda t: torch.tanh(net(t)), torch.tensor([0.1, -0.1]))
print(J, J.shape)

# a Hessian of a loss with respect to weights, by flattening them
X = torch.tensor([[1.0, 2.0], [0.5, -1.0], [-1.0, 0.0]])
y = torch.tensor([1.0, 0.0, 1.0])


def loss_of(w):
    return torch.nn.functional.binary_cross_entropy_with_logits(X @ w, y)


H = hessian(loss_of, torch.tensor([0.2, -0.3]))
print(H, torch.allclose(H, H.T))
print(jacobian(lambda w: X @ w, torch.zeros(2), strategy="reverse-mode"))
