# Follows CS231n-style gradient checking: a centred finite-difference numerical gradient written by hand
# in float64, compared with autograd using the relative error, for a softmax classifier loss and a
# two-layer net; then the same check with torch.autograd.gradcheck.
import torch
import torch.nn.functional as F

X = torch.tensor([[0.2, -0.5, 1.0], [1.5, 0.3, -0.2], [-0.7, 0.8, 0.4], [0.0, -1.0, 0.6]], dtype=torch.float64)
y = torch.tensor([0, 2, 1, 2])
W = torch.tensor([[0.01, -0.02, 0.03], [0.04, 0.0, -0.01], [-0.03, 0.02, 0.01]], dtype=torch.float64,
                 requires_grad=True)


def softmax_loss(W, reg=0.1):
    scores = X @ W
    return F.cross_entropy(scores, y) + reg * (W * W).sum()


def eval_numerical_gradient(f, x, h=1e-5):
    grad = torch.zeros_like(x)
    with torch.no_grad():
        flat = x.view(-1)
        for i in range(flat.numel()):
            old = flat[i].item()
            flat[i] = old + h
            fxph = f(x).item()
            flat[i] = old - h
            fxmh = f(x).item()
            flat[i] = old
            grad.view(-1)[i] = (fxph - fxmh) / (2 * h)
    return grad


def rel_error(x, y):
    return ((x - y).abs() / torch.clamp(x.abs() + y.abs(), min=1e-8)).max().item()


loss = softmax_loss(W)
loss.backward()
num = eval_numerical_gradient(softmax_loss, W)
print(f"loss {loss.item():.6f}")
print(W.grad)
print(rel_error(num, W.grad) < 1e-7, W.dtype, num.dtype)

W1 = torch.tensor([[0.1, -0.2], [0.3, 0.1], [-0.1, 0.2]], dtype=torch.float64, requires_grad=True)
W2 = torch.tensor([[0.5, -0.4, 0.2], [0.1, 0.3, -0.6]], dtype=torch.float64, requires_grad=True)


def two_layer(W1, W2):
    return F.cross_entropy(torch.relu(X @ W1) @ W2, y)


two_layer(W1, W2).backward()
for name, param in [("W1", W1), ("W2", W2)]:
    f = (lambda w: two_layer(w, W2)) if name == "W1" else (lambda w: two_layer(W1, w))
    num = eval_numerical_gradient(f, param)
    print(name, rel_error(num, param.grad) < 1e-6)

print(torch.autograd.gradcheck(two_layer, (W1, W2)))
print(torch.autograd.gradcheck(softmax_loss, (W,)))
