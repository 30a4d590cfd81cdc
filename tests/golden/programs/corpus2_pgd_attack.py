# PGD (projected gradient descent) L-inf attack, after Madry et al.'s recipe as written in the "Adversarial
# Robustness - Theory and Practice" tutorial (https://adversarial-ml-tutorial.org/adversarial_examples/):
# pgd_linf with delta = torch.zeros_like(X, requires_grad=True), delta.data = (delta + alpha*delta.grad.detach().sign())
# .clamp(-epsilon, epsilon), delta.grad.zero_(). Fixed model weights and inputs instead of MNIST.
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.8 + i).reshape(p.shape))

X = torch.sin(torch.arange(4 * 6) * 0.3).reshape(4, 6)
y = torch.tensor([0, 2, 1, 1])


def fgsm(model, X, y, epsilon):
    delta = torch.zeros_like(X, requires_grad=True)
    loss = nn.CrossEntropyLoss()(model(X + delta), y)
    loss.backward()
    return epsilon * delta.grad.detach().sign()


def pgd_linf(model, X, y, epsilon, alpha, num_iter):
    delta = torch.zeros_like(X, requires_grad=True)
    for t in range(num_iter):
        loss = nn.CrossEntropyLoss()(model(X + delta), y)
        loss.backward()
        delta.data = (delta + alpha * delta.grad.detach().sign()).clamp(-epsilon, epsilon)
        delta.grad.zero_()
    return delta.detach()


def epoch_adversarial(X, y, attack, *args):
    yp = model(X + attack(model, X, y, *args))
    loss = nn.CrossEntropyLoss()(yp, y)
    err = (yp.max(dim=1)[1] != y).sum().item()
    return err / X.shape[0], loss.item()


print("clean", (model(X).max(dim=1)[1] != y).sum().item())
print("FGSM: %.4f %.4f" % epoch_adversarial(X, y, fgsm, 0.1))
print("PGD:  %.4f %.4f" % epoch_adversarial(X, y, pgd_linf, 0.1, 1e-2, 20))
print(pgd_linf(model, X, y, 0.1, 1e-2, 5))
