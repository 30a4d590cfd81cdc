# Scaled dot-product and multi-head attention, after "The Annotated Transformer"
# (https://nlp.seas.harvard.edu/annotated-transformer/): attention(query, key, value, mask) with
# scores.masked_fill(mask == 0, -1e9), scores.softmax(dim=-1), subsequent_mask via torch.triu(..., diagonal=1),
# MultiHeadedAttention with clones(nn.Linear(d_model, d_model), 4), view(nbatches, -1, h, d_k).transpose(1, 2),
# .contiguous().view(...). Dropout is off; weights fixed.
import copy
import math
import torch
import torch.nn as nn


def clones(module, N):
    return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])


def subsequent_mask(size):
    attn_shape = (1, size, size)
    subsequent_mask = torch.triu(torch.ones(attn_shape), diagonal=1).type(torch.uint8)
    return subsequent_mask == 0


def attention(query, key, value, mask=None, dropout=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


class MultiHeadedAttention(nn.Module):
    def __init__(self, h, d_model, dropout=0.1):
        super(MultiHeadedAttention, self).__init__()
        assert d_model % h == 0
        self.d_k = d_model // h
        self.h = h
        self.linears = clones(nn.Linear(d_model, d_model), 4)
        self.attn = None
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, query, key, value, mask=None):
        if mask is not None:
            mask = mask.unsqueeze(1)
        nbatches = query.size(0)
        query, key, value = [
            lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
            for lin, x in zip(self.linears, (query, key, value))
        ]
        x, self.attn = attention(query, key, value, mask=mask, dropout=self.dropout)
        x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
        del query
        del key
        del value
        return self.linears[-1](x)


print(subsequent_mask(4))
mha = MultiHeadedAttention(2, 8, dropout=0.0)
with torch.no_grad():
    for i, p in enumerate(mha.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.3)
x = torch.sin(torch.arange(2 * 4 * 8) * 0.29).reshape(2, 4, 8).requires_grad_()
out = mha(x, x, x, subsequent_mask(4))
print(out.shape)
print(mha.attn[0, 1])
out.pow(2).mean().backward()
print(x.grad[0, 0])
print(mha.linears[0].weight.grad.abs().sum())
