# Softmax regression from scratch, after d2l.ai "Softmax Regression Implementation from Scratch"
# (https://d2l.ai/chapter_linear-classification/softmax-regression-scratch.html): softmax(X) = X_exp / X_exp.sum(1, keepdims=True),
# cross_entropy(y_hat, y) = -torch.log(y_hat[list(range(len(y_hat))), y]).mean(), accuracy via argmax and type casting,
# W = torch.normal(0, sigma, ...) replaced by fixed values, minibatch SGD by hand. Fixed 'images' instead of Fashion-MNIST.
import torch


def softmax(X):
    X_exp = torch.exp(X)
    partition = X_exp.sum(1, keepdims=True)
    return X_exp / partition


X = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print(X.sum(0, keepdims=True), X.sum(1, keepdims=True))
X_prob = softmax(torch.tensor([[0.1, 0.5, -0.2, 0.0, 0.3], [1.0, -1.0, 0.5, 0.2, 0.0]]))
print(X_prob, X_prob.sum(1))
num_inputs, num_outputs = 12, 3
W = (torch.sin(torch.arange(num_inputs * num_outputs) * 0.77) * 0.01).reshape(num_inputs, num_outputs).requires_grad_(True)
b = torch.zeros(num_outputs, requires_grad=True)


def net(X):
    X = X.reshape((-1, W.shape[0]))
    return softmax(torch.matmul(X, W) + b)


def cross_entropy(y_hat, y):
    return -torch.log(y_hat[list(range(len(y_hat))), y]).mean()


y = torch.tensor([0, 2])
y_hat = torch.tensor([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])
print(y_hat[[0, 1], y])
print(cross_entropy(y_hat, y))


def accuracy(y_hat, y):
    if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
        y_hat = y_hat.argmax(axis=1)
    cmp = y_hat.type(y.dtype) == y
    return float(cmp.type(y.dtype).sum())


print(accuracy(y_hat, y) / len(y))
features = torch.sin(torch.arange(30 * num_inputs) * 0.21).reshape(30, 1, 3, 4)
labels = (torch.arange(30) * 7) % 3
lr, batch_size = 0.1, 10
for epoch in range(3):
    for i in range(0, 30, batch_size):
        Xb, yb = features[i:i + batch_size], labels[i:i + batch_size]
        l = cross_entropy(net(Xb), yb)
        l.backward()
        with torch.no_grad():
            for param in [W, b]:
                param -= lr * param.grad
                param.grad.zero_()
    with torch.no_grad():
        train_l = cross_entropy(net(features), labels)
        acc = accuracy(net(features), labels) / len(labels)
    print(f'epoch {epoch + 1}, loss {float(train_l):f}, acc {acc:.3f}')
print(b)
