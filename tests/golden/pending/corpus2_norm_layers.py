# LayerNorm, GroupNorm and InstanceNorm as the PyTorch docs' examples use them
# (https://pytorch.org/docs/stable/generated/torch.nn.LayerNorm.html "NLP Example": batch, sentence_length, embedding_dim = 20, 5, 10;
# layer_norm = nn.LayerNorm(embedding_dim); "Image Example" nn.LayerNorm([C, H, W]); nn.GroupNorm(3, 6) "Separate 6 channels into 3 groups";
# nn.InstanceNorm2d), with fixed inputs instead of torch.randn and gradients.
import torch
import torch.nn as nn
import torch.nn.functional as F

batch, sentence_length, embedding_dim = 2, 3, 4
embedding = torch.sin(torch.arange(batch * sentence_length * embedding_dim) * 0.8).reshape(batch, sentence_length, embedding_dim)
layer_norm = nn.LayerNorm(embedding_dim)
out = layer_norm(embedding)
print(out[0])
print(layer_norm)
N, C, H, W = 2, 3, 2, 2
inp = torch.cos(torch.arange(N * C * H * W) * 0.6).reshape(N, C, H, W).requires_grad_()
layer_norm = nn.LayerNorm([C, H, W], elementwise_affine=False)
print(layer_norm(inp)[1, 0])
inp6 = torch.sin(torch.arange(2 * 6 * 2 * 2) * 0.45).reshape(2, 6, 2, 2).requires_grad_()
m = nn.GroupNorm(3, 6)
print(m)
y = m(inp6)
print(y[0, :2])
(y * torch.arange(24.0).reshape(6, 2, 2)).sum().backward()
print(inp6.grad[0, 0])
print(m.weight.grad)
inorm = nn.InstanceNorm2d(3)
print(inorm(inp)[0, 2])
print(F.layer_norm(embedding, (4,), eps=1e-3)[1, 2])
print(F.group_norm(inp6, 2)[1, 5])
print(nn.RMSNorm(4)(embedding)[0])
