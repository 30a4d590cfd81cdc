# CausalSelfAttention and the MLP block, after Karpathy's nanoGPT model.py (https://github.com/karpathy/nanoGPT/blob/master/model.py):
# self.c_attn = nn.Linear(n_embd, 3 * n_embd); q, k, v = self.c_attn(x).split(self.n_embd, dim=2);
# k.view(B, T, n_head, C // n_head).transpose(1, 2); the manual attention path with
# att.masked_fill(self.bias[:,:,:T,:T] == 0, float('-inf')), F.softmax, y.transpose(1, 2).contiguous().view(B, T, C);
# MLP with nn.GELU(); LayerNorm with bias; weight-tied lm_head; F.cross_entropy(logits.view(-1, V), targets.view(-1), ignore_index=-1).
import math
import torch
import torch.nn as nn
from torch.nn import functional as F


class LayerNorm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        self.n_embd = n_embd
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd)
        self.dropout = nn.Dropout(0.0)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = LayerNorm(8, bias=True)
        self.attn = CausalSelfAttention(8, 2, 6)
        self.ln_2 = LayerNorm(8, bias=True)
        self.mlp = MLP(8)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


vocab = 11
wte = nn.Embedding(vocab, 8)
wpe = nn.Embedding(6, 8)
block = Block()
ln_f = LayerNorm(8, bias=True)
lm_head = nn.Linear(8, vocab, bias=False)
wte.weight = lm_head.weight
params = list(wte.parameters()) + list(wpe.parameters()) + list(block.parameters()) + list(ln_f.parameters())
with torch.no_grad():
    for i, p in enumerate(params):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.2)
print(sum(p.numel() for p in params))
idx = torch.tensor([[1, 5, 2, 9, 3, 0], [4, 4, 7, 10, 2, 6]])
targets = torch.tensor([[5, 2, 9, 3, 0, -1], [4, 7, 10, 2, 6, 1]])
pos = torch.arange(0, 6, dtype=torch.long)
optimizer = torch.optim.AdamW(params, lr=1e-2, betas=(0.9, 0.95), weight_decay=0.1)
for it in range(3):
    x = wte(idx) + wpe(pos)
    x = ln_f(block(x))
    logits = lm_head(x)
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    optimizer.step()
    print(f"iter {it}: loss {loss.item():.4f}")
print(lm_head.weight is wte.weight, wte.weight.grad.shape)
print(block.attn.bias[0, 0])
