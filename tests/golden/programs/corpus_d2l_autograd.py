# Follows d2l.ai's "Automatic Differentiation" chapter (2.5, PyTorch tab): y = 2 x.x, x.grad == 4 * x,
# x.grad.zero_(), backward of non-scalars via sum, detaching computation, control flow f(a).
import torch

x = torch.arange(4.0)
print(x)
x.requires_grad_(True)
print(x.grad)
y = 2 * torch.dot(x, x)
print(y)
y.backward()
print(x.grad)
print(x.grad == 4 * x)

x.grad.zero_()  # Reset the gradient
y = x.sum()
y.backward()
print(x.grad)

x.grad.zero_()
y = x * x
y.backward(gradient=torch.ones(len(y)))  # Faster: y.sum().backward()
print(x.grad)

x.grad.zero_()
y = x * x
u = y.detach()
z = u * x
z.sum().backward()
print(x.grad == u)

x.grad.zero_()
y.sum().backward()
print(x.grad == 2 * x)


def f(a):
    b = a * 2
    while b.norm() < 1000:
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b
    return c


a = torch.tensor(-0.8137, requires_grad=True)
d = f(a)
d.backward()
print(a.grad == d / a, a.grad, d)

# exercise-style: the derivative of sin(x) plotted in the chapter, checked against cos(x)
x = torch.linspace(0, 3.0, 7, requires_grad=True)
y = torch.sin(x)
y.sum().backward()
print(torch.allclose(x.grad, torch.cos(x.detach())), x.grad)

# a vector-valued function's gradient needs an explicit `gradient` argument
x = torch.tensor([1.0, 2.0], requires_grad=True)
try:
    (x ** 2).backward()
except RuntimeError as e:
    print("RuntimeError:", e)

# the linear-regression-from-scratch chapter (3.4): sgd with params and a batch size
def linreg(X, w, b):
    return torch.matmul(X, w) + b


def squared_loss(y_hat, y):
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


true_w, true_b = torch.tensor([2, -3.4]), 4.2
features = torch.tensor([[0.5, 1.0], [-1.0, 0.25], [1.5, -0.5], [0.0, 0.75], [2.0, 1.0], [-0.5, -1.5]])
labels = (torch.matmul(features, true_w) + true_b).reshape((-1, 1))
w = torch.zeros((2, 1), requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr, num_epochs, batch_size = 0.25, 3, 3
for epoch in range(num_epochs):
    for i in range(0, 6, batch_size):
        X, y = features[i:i + batch_size], labels[i:i + batch_size]
        l = squared_loss(linreg(X, w, b), y)
        l.sum().backward()
        sgd([w, b], lr, batch_size)
    with torch.no_grad():
        train_l = squared_loss(linreg(features, w, b), labels)
        print(f'epoch {epoch + 1}, loss {float(train_l.mean()):f}')
print(f'error in estimating w: {true_w - w.reshape(true_w.shape)}')
print(f'error in estimating b: {true_b - b}')
