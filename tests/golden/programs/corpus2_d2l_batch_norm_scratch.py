# Batch normalisation from scratch, after d2l.ai "Batch Normalization" (https://d2l.ai/chapter_convolutional-modern/batch-norm.html):
# batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum) with torch.is_grad_enabled(), len(X.shape) in (2, 4),
# X.mean(dim=(0, 2, 3), keepdim=True), moving_mean = (1.0 - momentum) * moving_mean + momentum * mean, and the BatchNorm
# module with nn.Parameter(torch.ones(shape)); compared with nn.BatchNorm1d / nn.BatchNorm2d.
import torch
from torch import nn


def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum):
    if not torch.is_grad_enabled():
        X_hat = (X - moving_mean) / torch.sqrt(moving_var + eps)
    else:
        assert len(X.shape) in (2, 4)
        if len(X.shape) == 2:
            mean = X.mean(dim=0)
            var = ((X - mean) ** 2).mean(dim=0)
        else:
            mean = X.mean(dim=(0, 2, 3), keepdim=True)
            var = ((X - mean) ** 2).mean(dim=(0, 2, 3), keepdim=True)
        X_hat = (X - mean) / torch.sqrt(var + eps)
        moving_mean = (1.0 - momentum) * moving_mean + momentum * mean
        moving_var = (1.0 - momentum) * moving_var + momentum * var
    Y = gamma * X_hat + beta
    return Y, moving_mean.data, moving_var.data


class BatchNorm(nn.Module):
    def __init__(self, num_features, num_dims):
        super().__init__()
        if num_dims == 2:
            shape = (1, num_features)
        else:
            shape = (1, num_features, 1, 1)
        self.gamma = nn.Parameter(torch.ones(shape))
        self.beta = nn.Parameter(torch.zeros(shape))
        self.moving_mean = torch.zeros(shape)
        self.moving_var = torch.ones(shape)

    def forward(self, X):
        if self.moving_mean.device != X.device:
            self.moving_mean = self.moving_mean.to(X.device)
            self.moving_var = self.moving_var.to(X.device)
        Y, self.moving_mean, self.moving_var = batch_norm(
            X, self.gamma, self.beta, self.moving_mean,
            self.moving_var, eps=1e-5, momentum=0.1)
        return Y


X = torch.sin(torch.arange(6 * 4) * 0.7).reshape(6, 4) * 3 + 1
bn = BatchNorm(4, num_dims=2)
ref = nn.BatchNorm1d(4)
y, y_ref = bn(X), ref(X)
print(y[0])
print(y_ref[0])
print(bn.moving_mean, ref.running_mean)
print(bn.moving_var)
print(ref.running_var)
y.sum().backward()
print(bn.gamma.grad.abs() < 1e-5, bn.beta.grad)
X4 = torch.cos(torch.arange(2 * 3 * 2 * 2) * 0.5).reshape(2, 3, 2, 2)
bn4, ref4 = BatchNorm(3, num_dims=4), nn.BatchNorm2d(3)
print(torch.allclose(bn4(X4), ref4(X4), atol=1e-5))
print(bn4.moving_var.flatten(), ref4.running_var)
ref4.eval()
with torch.no_grad():
    print(bn4(X4)[0, 0], ref4(X4)[0, 0])
print(ref4.state_dict().keys())
