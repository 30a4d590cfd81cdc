# Follows the PyTorch tutorial "Learning PyTorch with Examples" (PyTorch: Tensors and autograd):
# fit y = sin(x) with a third-order polynomial, weights as plain tensors, manual updates under no_grad.
import math
import torch

dtype = torch.float
x = torch.linspace(-math.pi, math.pi, 9, dtype=dtype)
y = torch.sin(x)

a = torch.tensor(0.1, dtype=dtype, requires_grad=True)
b = torch.tensor(-0.2, dtype=dtype, requires_grad=True)
c = torch.tensor(0.3, dtype=dtype, requires_grad=True)
d = torch.tensor(0.05, dtype=dtype, requires_grad=True)

learning_rate = 2e-4
for t in range(40):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    if t % 10 == 9:
        # the tutorial prints loss.item() in full; a float32 sum of 8 or more numbers is added in
        # another order by numpy than by PyTorch's vectorised kernel (last bit), so 6 digits here
        print(t, f"{loss.item():.6g}")
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

print(f'Result: y = {a.item():.4f} + {b.item():.4f} x + {c.item():.4f} x^2 + {d.item():.4f} x^3')
print(loss.grad_fn, y_pred.grad_fn.name())
print(a.is_leaf, y_pred.is_leaf, a.grad)

# the same model with nn.Sequential and the xx = x.unsqueeze(-1).pow(p) trick
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)
print(xx.shape, xx.dtype)
model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[-0.2, 0.3, 0.05]]))
    model[0].bias.fill_(0.1)
loss_fn = torch.nn.MSELoss(reduction='sum')
for t in range(30):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 10 == 9:
        print(t, round(loss.item(), 4))
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad
linear_layer = model[0]
print(f'Result: y = {linear_layer.bias.item():.4f} + {linear_layer.weight[:, 0].item():.4f} x + '
      f'{linear_layer.weight[:, 1].item():.4f} x^2 + {linear_layer.weight[:, 2].item():.4f} x^3')
